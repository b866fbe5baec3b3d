import ArgumentParser
import Foundation
import Scenes

struct ThrowsRender: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render scenes of throws (or of distractors, or labeled clips of throw types) with their exact truth.",
        discussion: """
            --set throws: scenes of one or two throws each, --count throws in all; \
            --set clutter: the same with things crossing the flights (a panel the ball \
            passes behind for 0.1–0.5 s, a person walking in front, a large box moving \
            back and forth behind, objects of the ball's size and colour rolling or \
            swinging across its path, a second ball thrown from the side at the same time; \
            the truth says when each ball was hidden and where it bounced); \
            --set session: one scene of --count throws in a row by one person, nothing else \
            moving (for `bench live --trajectories`); \
            --set distractors: 20-second scenes with no throw, --minutes in all (the figure \
            waving, people walking by, leaves, a shaking camera); --set types: labeled \
            folders train/ and test/ of overhand, underhand and background clips for \
            `poseact extract` and `train`. Each video (H.264 MP4) has its truth beside it \
            (CLIP.json: every throw's release time and point, speed in m/s and px/s, angle, \
            landing, hit; the scale and the target; the shakes; the scene itself). What \
            varies from scene to scene, all drawn from --seed: the room's colours and \
            light, sensor noise, the figure's size and place, the hand, the direction, the \
            throw's type, speed (4–12 m/s) and angle, the ball's size and colour, a bounce, \
            a shadow, and the distractors. The same seed renders the same scenes.
            """)

    enum SceneSet: String, ExpressibleByArgument, CaseIterable { case throwsSet = "throws", clutter, session, distractors, types }

    @Argument(help: "The folder to write (created; must not hold files of another set).") var output: String
    @Option(name: .customLong("set"), help: "throws, clutter, session, distractors or types.") var sceneSet: SceneSet = .throwsSet
    @Option(parsing: .unconditional, help: "Throws to render (--set throws, clutter, session).") var count = 20
    @Option(parsing: .unconditional, help: "Minutes of distractor video (--set distractors).") var minutes = 1.0
    @Option(parsing: .unconditional, help: "Train clips per label, and a third as many test clips (--set types).") var perLabel = 20
    @Option(parsing: .unconditional, help: "The seed every scene is drawn from.") var seed: UInt64 = 1
    @Option(parsing: .unconditional, help: "Picture size (--set throws, clutter, distractors).") var width = 1280
    @Option(parsing: .unconditional) var height = 720

    func validate() throws {
        guard (1...10_000).contains(count) else { throw ValidationError("--count must be 1…10000 (got \(count))") }
        guard minutes > 0, minutes <= 600 else { throw ValidationError("--minutes must be above 0 and at most 600 (got \(minutes))") }
        guard (1...1000).contains(perLabel) else { throw ValidationError("--per-label must be 1…1000 (got \(perLabel))") }
        guard (64...3840).contains(width), (64...2160).contains(height), width % 2 == 0, height % 2 == 0 else {
            throw ValidationError("--width and --height must be even, 64…3840 and 64…2160 (got \(width)×\(height))")
        }
        try OutputPaths.check(output, flag: "the output folder", kind: .folder)
    }

    func run() throws {
        let folder = URL(fileURLWithPath: output)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let started = Date()
        if sceneSet == .types {
            var n = 0
            try ThrowScenes.writeTypeDataset(to: folder, perLabel: perLabel, seed: seed) { name in
                n += 1
                note("  \(name)")
            }
            print("wrote \(n) labeled clips (overhand, underhand, background) to \(output) in \(Int(Date().timeIntervalSince(started))) s")
            return
        }
        let scenes: [ThrowScene]
        switch sceneSet {
        case .throwsSet: scenes = ThrowScenes.throwSet(throwCount: count, seed: seed, width: width, height: height)
        case .clutter: scenes = ThrowScenes.clutterSet(throwCount: count, seed: seed, width: width, height: height)
        case .session: scenes = [ThrowScenes.sessionScene(throwCount: count, seed: seed, width: width, height: height)]
        default: scenes = ThrowScenes.distractorSet(minutes: minutes, seed: seed, width: width, height: height)
        }
        let prefix = ["throws": "throw", "clutter": "clutter", "session": "session"][sceneSet.rawValue] ?? "distractor"
        var frames = 0
        for (k, scene) in scenes.enumerated() {
            let name = String(format: "%@%03d", prefix, k + 1)
            try ThrowScenes.write(scene, name: name, to: folder)
            frames += scene.frames
            note(String(format: "  %@.mp4: %.1f s, %d throw%@", name, scene.seconds, scene.throwsPlanned.count,
                        scene.throwsPlanned.count == 1 ? "" : "s"))
        }
        let seconds = Date().timeIntervalSince(started)
        print(String(format: "wrote %d scenes (%d throws, %.1f min of video) to %@ in %.0f s (%.0f frames/s)", scenes.count,
                     scenes.reduce(0) { $0 + $1.throwsPlanned.count }, Double(frames) / 30 / 60, output, seconds, Double(frames) / max(seconds, 1e-9)))
    }
}
