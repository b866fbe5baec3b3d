import ArgumentParser
import Basics
import Classifier
import Foundation
import Keypoints
import Live
import OutputLines

struct Annotate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a trained model over a recorded video: overlay, timeline and summary.",
        discussion: """
            The video is read at the model's frame rate and goes through the pose pipeline and \
            the model exactly as in `live` (the same preprocessing as training, from the weights \
            file): a prediction every `stride` frames on the last `window` frames of the \
            prominent person, from the first frame that can fill 60 % of a window (the 24th of \
            32), "no person" when fewer than 60 % of those frames hold a pose, \
            "low confidence" under --min-confidence. As in live, every person is classified \
            (--people), their predictions make occurrences, their repetitions are counted and \
            --angles measured. --output writes the video with every \
            person's wireframe, label, count and angles, and the action banner (as live shows \
            it, so the banner trails the action by about half a window); --timeline writes the \
            occurrences (JSON or CSV by extension), each prediction placed at the middle of \
            its window. The label ranges of the prominent person, as Create ML's preview shows \
            them, are printed (and in --json). --compare takes an annotation file \
            (video,label,start,end) and prints the share of annotated time the ranges agree \
            with, leaving out 1 s on each side of every change of label, and how the \
            occurrences of the people who were prominent match its segments (their number, \
            labels, and the distance of each boundary from the annotated one). \
            --trajectories finds thrown objects' trajectories and each person's throws, as \
            in live; they are drawn in --output, printed, and in --timeline (a JSON line per \
            throw; in CSV a row labelled throw:TYPE from the release to the landing).
            """)

    @OptionGroup var options: LiveOptions
    @OptionGroup(title: "Trajectories and throws") var throwing: TrajectoryArguments
    @Argument(help: "The video file.") var input: String
    @Option(name: .shortAndLong, help: "The annotated video to write (.mp4).") var output: String?
    @Option(help: "The occurrences to write (.json or .csv): person, label, start, end, confidences, repetitions.") var timeline: String?
    @Option(help: "An annotation file to compare the timeline with (CSV or JSON: video,label,start,end).") var compare: String?
    @Flag(help: "Print one JSON object (timeline, summary, agreement) instead of text.") var json = false

    func validate() throws {
        guard FileManager.default.fileExists(atPath: input) else { throw PathError("\(input): no such video file") }
        if let compare, !FileManager.default.fileExists(atPath: compare) {
            throw PathError("--compare \(compare): no such annotation file")
        }
        var inputs: [(flag: String, path: String)] = [("the video", input), ("--model", modelPath(options.model))]
            + options.pose.inference.models.inputs
        if let compare { inputs.append(("--compare", compare)) }
        if let output { try OutputPaths.check(output, flag: "--output", inputs: inputs) }
        if let timeline {
            try OutputPaths.check(timeline, flag: "--timeline", inputs: inputs + (output.map { [("--output", $0)] } ?? []))
            if let output, timeline == output { throw ValidationError("--timeline and --output are one path (\(output)); give two") }
        }
    }

    /// `annotate --json`.
    struct Summary: Encodable {
        var input: String
        var frames: Int
        /// Seconds of video.
        var duration: Double
        /// Seconds it took.
        var seconds: Double
        var predictions: Int
        var timeline: [TimelineRange]
        /// Seconds per state.
        var summary: [String: Double]
        /// With --compare: the share of the compared seconds the timeline agrees on.
        var agreement: Double?
        var comparedSeconds: Double?
        var occurrences: [OccurrenceLine]
        var repetitions: [RepetitionLine]
        var people: [PersonLine]
        /// With --compare: the occurrences against the annotated segments.
        var occurrenceMatch: OccurrenceMatch?
        /// With --trajectories.
        var trajectories: [TrajectoryLine]?
        var throwsMade: [ThrowLine]?
        var throwers: [ThrowerLine]?

        enum CodingKeys: String, CodingKey {
            case input, frames, duration, seconds, predictions, timeline, summary, agreement, comparedSeconds
            case occurrences, repetitions, people, occurrenceMatch, trajectories, throwsMade = "throws", throwers
        }
    }

    func run() throws {
        // The very pipeline `live` runs, without the real-time part.
        // The annotation file is read first, so that one without this video's ranges is said at once.
        let annotated = try compare.map { try DatasetSources.annotatedRanges(ofVideo: input, in: $0) }
        let live = try options.livePipeline(background: false)
        let annotator = Annotator(pipeline: live.pipeline, coach: live.coach)
        annotator.throwCoach = throwing.throwCoach(labels: live.coach.classifier.labels, backgroundLabels: options.backgroundLabel)
        let classifier = live.coach.classifier
        let angleNames = live.coach.options.angles.map(\.name)
        var bar: ProgressDisplay?
        let started = Date()
        let result = try annotator.run(input: input, output: output) { n, total in
            if bar == nil, let total { bar = ProgressDisplay(title: "annotate", total: total, unit: "frames") }
            bar?.update(done: min(n, bar?.total ?? n))
        }
        let seconds = Date().timeIntervalSince(started)
        let occurrences = result.occurrences.map(OccurrenceLine.init)
        let throwLines = result.throwsMade.map(ThrowLine.init)
        if let timeline {
            let text: String
            if timeline.hasSuffix(".csv") {
                text = CSV.text(header: OccurrenceLine.csvHeader, rows: occurrences.map(\.csvFields) + result.throwsMade.map(Self.csvFields))
            } else {
                text = TimelineFile(occurrences: occurrences, throwsMade: throwLines).text
            }
            try AtomicFile.write(text, to: timeline)
        }
        let agreement = annotated.map { TimelineAgreement.compute(result.timeline, annotations: $0) }
        let match = annotated.map { a in
            OccurrenceMatch.compute(result.occurrences.filter { result.prominent.contains($0.person) }.map(\.occurrence), annotations: a)
        }
        if json {
            print(JSONLines.encode(Summary(input: input, frames: result.frames, duration: result.duration, seconds: seconds,
                                           predictions: result.predictions.count, timeline: result.timeline,
                                           summary: result.summary.seconds, agreement: agreement?.agreement,
                                           comparedSeconds: agreement?.seconds, occurrences: occurrences,
                                           repetitions: result.repetitions.map(RepetitionLine.init),
                                           people: result.people.map(PersonLine.init), occurrenceMatch: match,
                                           trajectories: throwing.trajectories ? result.trajectories.map(TrajectoryLine.init) : nil,
                                           throwsMade: throwing.trajectories ? throwLines : nil,
                                           throwers: throwing.trajectories
                                               ? result.throwers.map { ThrowerLine($0, hasTarget: throwing.target != nil) } : nil)))
            return
        }
        print(String(format: "%@: %d frames (%.1f s) at %g fps in %.1f s, %d predictions", input, result.frames, result.duration,
                     classifier.spec.fps, seconds, result.predictions.count))
        print("the prominent person's labels:")
        for r in result.timeline {
            print(String(format: "  %7.2f – %7.2f  %@%@", r.start, r.end, r.label, r.confidence.map { String(format: " (%.0f%%)", $0 * 100) } ?? ""))
        }
        if !result.repetitions.isEmpty {
            print("repetitions:")
            for r in result.repetitions { print("  " + RepetitionLine(r).text(order: angleNames)) }
        }
        if throwing.trajectories {
            print("\(result.trajectories.count) trajector\(result.trajectories.count == 1 ? "y" : "ies"), \(throwLines.count) throw\(throwLines.count == 1 ? "" : "s"):")
            for t in throwLines { print(String(format: "  %7.2f s  ", t.release) + t.text) }
            for t in result.throwers { print("  " + ThrowerLine(t, hasTarget: throwing.target != nil).text) }
        }
        print("summary per person:")
        for person in result.people { for line in PersonLine(person).lines { print("  " + line) } }
        if let agreement {
            print(String(format: "agreement with %@: %.1f%% of %.1f s (1 s around each change of label left out)",
                         compare!, agreement.agreement * 100, agreement.seconds))
        }
        if let match {
            var line = "occurrences against \(compare!): \(match.occurrences) for \(match.segments) annotated segments"
            if let worst = match.maxBoundaryError, let mean = match.meanBoundaryError {
                line += String(format: ", labels %@, boundaries %.2f s off on average, %.2f s at most",
                               match.sameLabels ? "the same" : "differ", mean, worst)
            }
            print(line)
        }
        if let output { note("wrote \(output)") }
    }

    /// A throw as a row of the occurrences' CSV: labelled throw:TYPE, from the release to
    /// the trajectory's end, the type's confidence as both confidences, no repetitions.
    static func csvFields(_ t: ThrowReport) -> [String] {
        let c = String(format: "%.3f", Double(t.typeConfidence ?? 0))
        return [String(t.person), "throw:" + (t.type ?? "unknown"), String(format: "%.3f", t.releaseTime),
                String(format: "%.3f", t.trajectory.end), c, c, "0"]
    }
}
