import ArgumentParser
import Basics
import Foundation
import Live
import ThrowEvaluation

struct ThrowsScore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "score",
        abstract: "Score live --trajectories on rendered scenes against their truth.",
        discussion: """
            Every CLIP.json in the folder (from `poseact throws render`) with its video: a \
            clip with throws goes through annotate's pipeline with --trajectories, the truth's \
            board as --scale and --target; a clip without throws through the trajectory \
            detector alone. Prints the share of throws found (a reported throw released \
            within 0.25 s of a true one, the same way; without --model only the flights a \
            trajectory follows), false trajectories per 10 minutes (a \
            trajectory that follows no true flight nor a bounce of one), trajectories with a \
            point while the camera shook, the release speed's relative error (median, 95th \
            percentile), the forearm's and the flight's angle errors at release (median), \
            the types and hits right. Throws released while the camera shook are not \
            counted (none may be reported). Every flight (the figure's and, in cluttered \
            scenes, the stray balls'): the share that makes exactly one trajectory, and the \
            trajectory's start speed error against the true speed at its first point. \
            --json prints one object.
            """)

    @Argument(help: "A folder of rendered scenes.") var folder: String
    @Option(help: "A weights file (.poseact.h5) or a run folder: the throw types' model (any model, for clips with throws).")
    var model: String?
    @OptionGroup var pose: PosePipelineOptions
    @Option(help: ArgumentHelp("The thrown object's size, its box's larger side as a share of the frame's width.", valueName: "min..max"))
    var objectSize = ShareRange(0.003...0.04)
    @Option(help: ArgumentHelp("A label of the model that is no throw type; repeat for several.", valueName: "label"))
    var backgroundLabel: [String] = ["background"]
    @Flag(help: "Print one JSON object.") var json = false

    func validate() throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw PathError("\(folder): no such folder (render one with poseact throws render)")
        }
    }

    struct Line: Encodable {
        var clips: Int
        var minutes: Double
        var throwsTrue: Int, throwsFound: Int?, foundShare: Double?, throwsDuringShake: Int
        var missed: [String]?
        var flightsTracked: Int, untracked: [String]
        var trajectories: Int, falseTrajectories: Int, falsePerTenMinutes: Double, falseTrajectoryClips: [String]
        var trajectoriesWhileShaking: Int, whileShakingClips: [String]
        var speedErrorMedian: Double?, speedErrorP95: Double?
        var releaseAngleErrorMedian: Double?, releaseAngleErrorP95: Double?
        var launchAngleErrorMedian: Double?, launchAngleErrorP95: Double?
        var typeAccuracy: Double?, hitAccuracy: Double?
        var flights: Int, flightsAsOne: Int, oneTrajectoryShare: Double, notOne: [String]
        var startSpeedErrorMedian: Double?, startSpeedErrorP95: Double?

        enum CodingKeys: String, CodingKey {
            case flights, flightsAsOne, oneTrajectoryShare, notOne, startSpeedErrorMedian, startSpeedErrorP95
            case clips, minutes, missed, trajectories, untracked, flightsTracked
            case throwsTrue = "throws", throwsFound, foundShare, throwsDuringShake
            case falseTrajectories, falsePerTenMinutes = "false_per_10_minutes"
            case falseTrajectoryClips, trajectoriesWhileShaking, whileShakingClips
            case speedErrorMedian, speedErrorP95
            case releaseAngleErrorMedian, releaseAngleErrorP95
            case launchAngleErrorMedian, launchAngleErrorP95
            case typeAccuracy, hitAccuracy
        }
    }

    func run() throws {
        let clips = try ThrowScoring.truths(in: folder)
        guard !clips.isEmpty else { throw PathError("\(folder): no CLIP.json truth files (render some with poseact throws render)") }
        var base = ThrowOptions()
        base.detector.objectSize = objectSize.range
        base.backgroundLabels = Set(backgroundLabel)
        let live = try model.map { try makeLivePipeline(model: $0, pose: pose, options: CoachOptions()) }
        var score = ThrowScore()
        let bar = ProgressDisplay(title: "score", total: clips.count, unit: "clips")
        for (k, (video, truth)) in clips.enumerated() {
            let shaking = truth.shake.map { $0.start...$0.end }
            let outcome: ClipOutcome
            if truth.throwsMade.isEmpty || live == nil {
                let (found, seconds) = try ThrowScoring.trajectories(in: video, options: base.detector)
                outcome = ClipOutcome(clip: truth.clip, seconds: seconds, flights: ThrowScoring.flights(truth), shaking: shaking,
                                      trajectories: found, throwsFound: [])
            } else {
                let annotator = Annotator(pipeline: live!.pipeline, coach: live!.coach)
                annotator.throwCoach = ThrowCoach(options: ThrowScoring.options(truth, base: base), labels: live!.coach.classifier.labels)
                let result = try annotator.run(input: video, output: nil)
                outcome = ClipOutcome(clip: truth.clip, seconds: result.duration, flights: ThrowScoring.flights(truth), shaking: shaking,
                                      trajectories: result.trajectories, throwsFound: result.throwsMade)
            }
            score.add(outcome)
            bar.update(done: k + 1)
        }

        let speed = ThrowScore.spread(score.speedErrors), release = ThrowScore.spread(score.releaseAngleErrors)
        let launch = ThrowScore.spread(score.launchAngleErrors), start = ThrowScore.spread(score.startSpeedErrors)
        let line = Line(clips: score.clips, minutes: round3(score.seconds / 60), throwsTrue: score.throwsTrue,
                        throwsFound: model == nil ? nil : score.throwsFound, foundShare: model == nil ? nil : round3(score.foundShare),
                        throwsDuringShake: score.throwsDuringShake, missed: model == nil ? nil : score.missed,
                        flightsTracked: score.flightsTracked, untracked: score.untracked,
                        trajectories: score.trajectories, falseTrajectories: score.falseTrajectories,
                        falsePerTenMinutes: round3(score.falsePerTenMinutes), falseTrajectoryClips: score.falseTrajectoryClips,
                        trajectoriesWhileShaking: score.trajectoriesWhileShaking, whileShakingClips: score.whileShakingClips,
                        speedErrorMedian: speed.map { round3($0.median) }, speedErrorP95: speed.map { round3($0.p95) },
                        releaseAngleErrorMedian: release.map { round3($0.median) }, releaseAngleErrorP95: release.map { round3($0.p95) },
                        launchAngleErrorMedian: launch.map { round3($0.median) }, launchAngleErrorP95: launch.map { round3($0.p95) },
                        typeAccuracy: score.typesScored > 0 ? round3(Double(score.typesRight) / Double(score.typesScored)) : nil,
                        hitAccuracy: score.hitsScored > 0 ? round3(Double(score.hitsRight) / Double(score.hitsScored)) : nil,
                        flights: score.flightsScored, flightsAsOne: score.flightsAsOne, oneTrajectoryShare: round3(score.asOneShare),
                        notOne: score.notOne, startSpeedErrorMedian: start.map { round3($0.median) },
                        startSpeedErrorP95: start.map { round3($0.p95) })
        if json { print(JSONLines.encode(line)); return }
        let strays = line.flights - line.throwsTrue
        print(String(format: "%d clips, %.1f min, %d throws%@%@: trajectories follow %d of the %d flights", line.clips, line.minutes,
                     line.throwsTrue, line.throwsDuringShake > 0 ? " (and \(line.throwsDuringShake) released while the camera shook, not counted)" : "",
                     strays > 0 ? " and \(strays) stray balls" : "", line.flightsTracked, line.flights))
        if let found = line.throwsFound, let share = line.foundShare {
            print(String(format: "throws found: %d of %d (%.1f %%)", found, line.throwsTrue, share * 100))
        } else if line.throwsTrue > 0 {
            print("throws not scored: no --model (the trajectory detector alone)")
        }
        print(String(format: "false trajectories: %d (%.2f per 10 minutes); with a point while the camera shook: %d",
                     line.falseTrajectories, line.falsePerTenMinutes, line.trajectoriesWhileShaking))
        if line.flights > 0 {
            print(String(format: "flights as exactly one trajectory: %d of %d (%.1f %%)", line.flightsAsOne, line.flights,
                         line.oneTrajectoryShare * 100))
        }
        if let start {
            print(String(format: "trajectory start speed error: median %.1f %%, 95th percentile %.1f %%", start.median * 100, start.p95 * 100))
        }
        if let speed {
            print(String(format: "release speed error: median %.1f %%, 95th percentile %.1f %%", speed.median * 100, speed.p95 * 100))
        }
        if let release { print(String(format: "release angle (forearm) error: median %.1f°, 95th percentile %.1f°", release.median, release.p95)) }
        if let launch { print(String(format: "launch angle (flight) error: median %.1f°, 95th percentile %.1f°", launch.median, launch.p95)) }
        if let t = line.typeAccuracy { print(String(format: "types right: %.1f %% of %d", t * 100, score.typesScored)) }
        if let h = line.hitAccuracy { print(String(format: "hits right: %.1f %% of %d", h * 100, score.hitsScored)) }
        for m in score.untracked.prefix(20) { print("  no trajectory: \(m)") }
        if model != nil { for m in score.missed.prefix(20) { print("  missed: \(m)") } }
        for f in score.falseTrajectoryClips.prefix(20) { print("  false: \(f)") }
        for f in score.notOne.prefix(20) { print("  not one: \(f)") }
        for f in score.whileShakingClips.prefix(20) { print("  while the camera shook: \(f)") }
    }
}
