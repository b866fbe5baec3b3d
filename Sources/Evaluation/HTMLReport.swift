import Basics
import Foundation
import Images

/// `evaluate --report DIR`'s `index.html`: one self-contained page (no network, nothing
/// outside the file) with the per-class precision and recall, the confusion matrix whose
/// cells list their clips, the learning curves, and every misclassified clip as an
/// animated skeleton with the prediction over time under it.
public struct HTMLReport: Sendable {
    /// One clip as the page animates it.
    public struct Clip: Codable, Sendable {
        public var id: String
        public var label: String
        public var predicted: String
        public var confidence: Double
        /// Frames per second of `frames`.
        public var fps: Double
        /// The picture's aspect (width / height): x and y are normalised to it.
        public var aspect: Double
        /// Per frame, x and y per joint (0–1, null when missing).
        public var frames: [[Float?]]
        /// Per window: its first frame, its length, and the label the model gave it with its probability.
        public var windows: [WindowPrediction]

        public init(id: String, label: String, predicted: String, confidence: Double, fps: Double, aspect: Double,
                    frames: [[Float?]], windows: [WindowPrediction]) {
            self.id = id; self.label = label; self.predicted = predicted; self.confidence = confidence
            self.fps = fps; self.aspect = aspect; self.frames = frames; self.windows = windows
        }
    }

    public struct WindowPrediction: Codable, Sendable {
        public var start: Int
        public var length: Int
        public var label: String
        public var confidence: Double
        public init(start: Int, length: Int, label: String, confidence: Double) {
            self.start = start; self.length = length; self.label = label; self.confidence = confidence
        }
    }

    /// Misclassified clips animated at most (each adds ~100 kB of poses to the page); the
    /// confusion cells list them all.
    public static let maxAnimated = 60

    public var title: String
    public var report: EvaluationReport
    /// Per clip: its true and predicted label (every clip scored), for the confusion cells.
    public var clipLabels: [(clip: String, truth: String, predicted: String)]
    /// The skeleton's joints and its edges (index pairs), for the animation.
    public var joints: [String]
    public var edges: [(Int, Int)]
    public var misclassified: [Clip]
    /// The training history's SVG, when the model file carries one.
    public var learningCurves: String?

    public init(title: String, report: EvaluationReport, clipLabels: [(clip: String, truth: String, predicted: String)],
                joints: [String], edges: [(Int, Int)], misclassified: [Clip], learningCurves: String?) {
        self.title = title; self.report = report; self.clipLabels = clipLabels; self.joints = joints; self.edges = edges
        self.misclassified = misclassified; self.learningCurves = learningCurves
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// The page.
    public func html() -> String {
        let labels = report.clips.labels
        var cells: [String: [String]] = [:]
        for c in clipLabels { cells["\(c.truth)\u{1}\(c.predicted)", default: []].append(c.clip) }
        var rows = ""
        for m in report.clips.perClass {
            rows += "<tr><td>\(Self.escape(m.label))</td><td>\(String(format: "%.3f", m.precision))</td><td>\(String(format: "%.3f", m.recall))</td>"
                + "<td>\(String(format: "%.3f", m.f1))</td><td>\(m.support)</td></tr>\n"
        }
        var confusion = "<tr><th>true \\ predicted</th>" + labels.map { "<th>\(Self.escape($0))</th>" }.joined() + "</tr>\n"
        let most = max(1, report.clips.confusion.flatMap { $0 }.max() ?? 1)
        for (i, truth) in labels.enumerated() {
            confusion += "<tr><th>\(Self.escape(truth))</th>"
            for (j, predicted) in labels.enumerated() {
                let n = report.clips.confusion[i][j]
                let clips = cells["\(truth)\u{1}\(predicted)"] ?? []
                let shade = Double(n) / Double(most)
                let colour = i == j ? "rgba(60,160,90,\(String(format: "%.2f", 0.15 + 0.85 * shade)))"
                                    : (n > 0 ? "rgba(210,80,60,\(String(format: "%.2f", 0.25 + 0.75 * shade)))" : "transparent")
                let list = clips.isEmpty ? "" : "<div class=clips>" + clips.map(Self.escape).joined(separator: "<br>") + "</div>"
                confusion += "<td class=\"cell\(n > 0 ? " some" : "")\" style=\"background:\(colour)\"><b>\(n)</b>\(list)</td>"
            }
            confusion += "</tr>\n"
        }
        struct Data: Encodable {
            var joints: [String]; var edges: [[Int]]; var clips: [Clip]
        }
        let data = JSONLines.encode(Data(joints: joints, edges: edges.map { [$0.0, $0.1] }, clips: misclassified))
            .replacingOccurrences(of: "<", with: "\\u003c")
        let curves = learningCurves.map { "<h2>Learning curves</h2><div class=curves>\($0)</div>" } ?? ""
        return """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(Self.escape(title))</title>
        <style>
          body { margin: 24px; font: 15px/1.45 system-ui, sans-serif; color: #222; background: #fafafa; }
          h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; }
          .dim { color: #666; } .big { font-size: 28px; font-weight: 700; margin-right: 24px; }
          table { border-collapse: collapse; background: #fff; }
          td, th { border: 1px solid #ddd; padding: 4px 8px; text-align: right; vertical-align: top; }
          th { background: #f0f0f0; } td:first-child { text-align: left; }
          .cell { min-width: 48px; text-align: center; } .clips { display: none; font-size: 12px; text-align: left; }
          .cell.some:hover .clips, .cell.open .clips { display: block; } .cell.some { cursor: pointer; }
          .clip { display: inline-block; margin: 0 16px 16px 0; padding: 8px; background: #fff; border: 1px solid #ddd; vertical-align: top; }
          .clip canvas { display: block; background: #1b1b1b; }
          .strip { display: flex; height: 14px; margin-top: 4px; position: relative; }
          .strip span { height: 100%; } .cursor { position: absolute; top: -2px; width: 2px; height: 18px; background: #000; }
          .legend span { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; }
          .curves svg { max-width: 100%; height: auto; background: #fff; }
        </style></head><body>
        <h1>\(Self.escape(title))</h1>
        <div class=dim>model \(Self.escape(report.model)) · data \(Self.escape(report.data)) · split \(Self.escape(report.split ?? "all"))</div>
        <p><span class=big>\(String(format: "%.1f %%", report.clips.accuracy * 100))</span> of \(report.clips.count) clips
        <span class=big style="margin-left:24px">\(String(format: "%.1f %%", report.windows.accuracy * 100))</span> of \(report.windows.count) windows
        · clip macro F1 \(String(format: "%.3f", report.clips.macroF1))</p>
        <h2>Per class (clips)</h2>
        <table id=classes><tr><th>label</th><th>precision</th><th>recall</th><th>F1</th><th>clips</th></tr>
        \(rows)</table>
        <h2>Confusion (clips; a cell lists its clips: hover or click)</h2>
        <table id=confusion>\(confusion)</table>
        \(curves)
        <h2>Misclassified clips (\(report.misclassified.count)\(report.misclassified.count > misclassified.count ? ", the \(misclassified.count) surest animated" : "")), the surest mistakes first</h2>
        <div class="legend dim" id=legend></div>
        <div id=clips></div>
        <script id=data type="application/json">\(data)</script>
        <script>
        const D = JSON.parse(document.getElementById("data").textContent);
        const labels = \(JSONLines.encode(labels).replacingOccurrences(of: "<", with: "\\u003c"));
        const colour = (l) => `hsl(${(labels.indexOf(l) * 137.5) % 360}, 65%, 50%)`;
        document.getElementById("legend").innerHTML = labels.map((l) => `<span style="background:${colour(l)}"></span>`).join("");
        labels.forEach((l, i) => document.getElementById("legend").children[i].after(document.createTextNode(l)));
        document.querySelectorAll(".cell.some").forEach((c) => c.addEventListener("click", () => c.classList.toggle("open")));
        const views = [];
        for (const clip of D.clips) {
          const box = document.createElement("div"); box.className = "clip";
          const head = document.createElement("div");
          head.textContent = `${clip.id}: ${clip.label} taken for ${clip.predicted} (${(clip.confidence * 100).toFixed(0)} %)`;
          const h = 180, w = Math.round(h * clip.aspect);
          const canvas = document.createElement("canvas"); canvas.width = w; canvas.height = h;
          const strip = document.createElement("div"); strip.className = "strip"; strip.style.width = w + "px";
          const n = clip.frames.length;
          for (const win of clip.windows) {
            const s = document.createElement("span");
            s.style.position = "absolute"; s.style.left = (win.start / n * 100) + "%"; s.style.width = (win.length / n * 100) + "%";
            s.style.background = colour(win.label); s.style.opacity = 0.35 + 0.65 * win.confidence;
            s.title = `${win.label} ${(win.confidence * 100).toFixed(0)} %`;
            strip.appendChild(s);
          }
          const cursor = document.createElement("div"); cursor.className = "cursor"; strip.appendChild(cursor);
          const now = document.createElement("div"); now.className = "dim";
          box.append(head, canvas, strip, now);
          document.getElementById("clips").appendChild(box);
          views.push({ clip, ctx: canvas.getContext("2d"), w, h, cursor, now });
        }
        function draw(view, f) {
          const { clip, ctx, w, h } = view, p = clip.frames[f];
          ctx.fillStyle = "#1b1b1b"; ctx.fillRect(0, 0, w, h);
          const win = clip.windows.filter((x) => x.start <= f && f < x.start + x.length).pop();
          ctx.strokeStyle = win ? colour(win.label) : "#888"; ctx.lineWidth = 2;
          for (const [a, b] of D.edges) {
            if (p[2 * a] == null || p[2 * b] == null) continue;
            ctx.beginPath(); ctx.moveTo(p[2 * a] * w, p[2 * a + 1] * h); ctx.lineTo(p[2 * b] * w, p[2 * b + 1] * h); ctx.stroke();
          }
          ctx.fillStyle = "#fff";
          for (let j = 0; j < D.joints.length; j++) {
            if (p[2 * j] == null) continue;
            ctx.beginPath(); ctx.arc(p[2 * j] * w, p[2 * j + 1] * h, 2.5, 0, 6.3); ctx.fill();
          }
          view.cursor.style.left = (f / clip.frames.length * 100) + "%";
          view.now.textContent = `frame ${f + 1} of ${clip.frames.length}` + (win ? ` · ${win.label} ${(win.confidence * 100).toFixed(0)} %` : "");
        }
        const started = performance.now();
        function tick(t) {
          for (const v of views) draw(v, Math.floor((t - started) / 1000 * v.clip.fps) % v.clip.frames.length);
          requestAnimationFrame(tick);
        }
        for (const v of views) draw(v, 0);
        requestAnimationFrame(tick);
        </script>
        </body></html>
        """
    }
}
