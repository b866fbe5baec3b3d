// evaluate --report's page: a legend of the labels, the confusion cells that open on a
// click, and each misclassified clip as an animated skeleton over its windows' predictions.
// The data (HTMLReport.swift) is the page's <script id="data"> element.
const D = JSON.parse(document.getElementById("data").textContent);
const labels = D.labels;
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
