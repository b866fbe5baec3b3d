import Basics
import Classifier
import Extraction
import Foundation
import Keypoints
import KeypointWindows
import OutputLines
import Scenes
import TFLite

/// Every reader of a file poseact may be handed by a stranger, each as the command that
/// reads such a file runs it, with the good files its fuzzing starts from.
public enum Readers {
    /// The readers, given the folder `Seeds.make` filled.
    public static func all(seeds: String) throws -> [(reader: FuzzedReader, seed: String)] {
        let s = { (name: String) in (seeds as NSString).appendingPathComponent(name) }
        // What a loaded model is run on, and what a checkpoint resumes with.
        let data = try TrainingData.load(path: s("store.h5"), config: Seeds.config)
        let windows = Array(data.test.prefix(4))
        let spec = data.spec
        let size = (width: 640, height: 360)
        func foreign(_ format: KeypointFormat) -> @Sendable (String) throws -> Void {
            { path in _ = try ForeignKeypoints.read(path, format: format, id: "fuzz", label: "fuzz", split: nil, fps: 30, size: size) }
        }
        // The videos an annotation file names must exist beside it (they are not decoded here).
        let annotations: @Sendable (String) throws -> Void = { path in
            let folder = (path as NSString).deletingLastPathComponent
            for video in Seeds.annotatedVideos where !FileManager.default.fileExists(atPath: folder + "/" + video) {
                FileManager.default.createFile(atPath: folder + "/" + video, contents: Data())
            }
            _ = try DatasetSources.annotatedRanges(ofVideo: Seeds.annotatedVideos[0], in: path)
        }
        var out: [(FuzzedReader, String)] = [
            (FuzzedReader(name: "store", input: .hdf5) { path in
                let store = try KeypointStore(path: path)
                _ = try DatasetReport(store: store)
                _ = try store.readAll()
                _ = try TrainingData.load(path: path, config: Seeds.config)
            }, s("store.h5")),
            (FuzzedReader(name: "weights", input: .hdf5) { path in
                let model = try ActionClassifier.load(path: path)
                if model.spec == spec { _ = model.probabilities(windows) }
            }, s("weights.poseact.h5")),
            (FuzzedReader(name: "checkpoint", input: .hdf5) { path in
                let config = try Trainer.checkpointConfig(path: path)
                _ = try Trainer.resume(from: path, config: config, data: data)
            }, s("checkpoint.h5")),
            (FuzzedReader(name: "windows", input: .hdf5) { path in
                _ = try TrainingData.load(path: path, config: Seeds.config)
            }, s("windows.h5")),
            (FuzzedReader(name: "keypoint-csv", input: .text) { path in _ = try KeypointCSV.read(path) }, s("keypoints.csv")),
            (FuzzedReader(name: "annotations-csv", input: .text, read: annotations), s("annotations.csv")),
            (FuzzedReader(name: "annotations-json", input: .text, read: annotations), s("annotations.json")),
            (FuzzedReader(name: "config-yaml", input: .text) { path in _ = try TrainingConfig.load(path: path) }, s("config.yaml")),
            (FuzzedReader(name: "coco", input: .text, read: foreign(.coco)), s("coco.json")),
            (FuzzedReader(name: "mediapipe", input: .text, read: foreign(.mediapipe)), s("mediapipe.json")),
            (FuzzedReader(name: "openpose", input: .text, read: foreign(.openpose)), s("openpose")),
            (FuzzedReader(name: "ntu", input: .text, read: foreign(.ntu)), s("sample.skeleton")),
            // `throws score`'s truth files, the studio's pose lines, and `extract --cache`'s
            // entries: a shared folder's files are anyone's.
            (FuzzedReader(name: "throws-truth", input: .text) { path in _ = try ThrowSceneTruth.read(path) }, s("truth.json")),
            (FuzzedReader(name: "studio-proposals", input: .text) { path in
                _ = try TimelineFile(text: String(decoding: try InputFile.read(path, limit: 64 << 20), as: UTF8.self), file: path)
            }, s("proposals.json")),
            (FuzzedReader(name: "studio-poses", input: .text) { path in
                _ = try JSONSerialization.data(withJSONObject: ["frames": PoseLines.drawingRows(try InputFile.read(path, limit: 128 << 20))])
            }, s("poses.jsonl")),
            (FuzzedReader(name: "cache-entry", input: .hdf5) { path in
                _ = try ExtractionCache.entry(at: path, key: Seeds.cacheKey, as: ClipSource(id: "fuzz", video: "fuzz.mp4", label: "fuzz"),
                                              estimator: Seeds.cacheEstimator, modelHash: Seeds.cacheModelHash)
            }, s("cache-entry.h5")),
        ]
        for model in ["pose_detection.tflite", "pose_landmark_full.tflite"] where FileManager.default.fileExists(atPath: s(model)) {
            out.append((FuzzedReader(name: "tflite-" + model.replacingOccurrences(of: ".tflite", with: ""), input: .binary) { path in
                let interpreter = try Interpreter(model: try ModelFile(path: path), options: .init(threads: 1))
                for i in interpreter.inputs.indices { interpreter.input(i).update(repeating: 0.5) }
                interpreter.invoke()
            }, s(model)))
        }
        return out
    }
}

/// The good files fuzzing starts from: a small store, the weights, checkpoint and windows
/// trained from it, its CSV, annotation files, a config, and the foreign samples and pose
/// models copied in.
public enum Seeds {
    /// What the cache-entry seed was saved under and made with.
    static let cacheKey = String(repeating: "ab", count: 32), cacheEstimator = "import", cacheModelHash = "fuzz-models"

    /// The videos the annotation seeds name.
    static let annotatedVideos = ["montage_01.mp4", "montage_02.mp4"]

    /// A quick net for the weights and checkpoint seeds.
    public static var config: TrainingConfig {
        var c = TrainingConfig()
        c.model.channels = 8
        c.model.dilations = [1, 2]
        c.optimizer.batchSize = 8
        c.training.epochs = 1
        c.training.threads = 1
        c.data.validationShare = 0
        return c
    }

    /// Writes the seeds into `folder` from a keypoint CSV (Penn Action's), the foreign
    /// samples folder (Tests/KeypointsTests/Samples), a training config and, if given, the
    /// folder of the pose models.
    public static func make(in folder: String, keypointCSV: String, samples: String, configYAML: String, models: String?) throws {
        let fm = FileManager.default
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let s = { (name: String) in (folder as NSString).appendingPathComponent(name) }
        // Three actions, a few clips each: small enough that a case reads in milliseconds.
        let all = try KeypointCSV.read(keypointCSV).clips
        let labels = Array(Set(all.map(\.label))).sorted().prefix(3)
        var clips: [ClipKeypoints] = []
        for label in labels {
            clips += all.filter { $0.label == label && $0.split == "train" }.prefix(3)
            clips += all.filter { $0.label == label && $0.split == "test" }.prefix(2)
        }
        let writer = try KeypointStoreWriter(path: s("store.h5"))
        for c in clips { try writer.append(c) }
        try writer.finish()
        let store = try KeypointStore(path: s("store.h5"))
        try KeypointCSV.export(store, to: s("keypoints.csv"))
        try WindowsFile.build(store: store, spec: config.preprocessing).0.write(to: s("windows.h5"))
        let data = try TrainingData.load(path: s("store.h5"), config: config)
        let trainer = Trainer(config: config, data: data)
        trainer.runEpoch()
        // With its labels' prototypes, as train writes it, so that they are fuzzed too.
        let (embeddings, of) = trainer.classifier.embeddings(data.train)
        trainer.classifier.prototypes = LabelPrototypes(embeddings: embeddings, labels: of)
        try trainer.saveModel(to: s("weights.poseact.h5"))
        try trainer.saveCheckpoint(to: s("checkpoint.h5"))
        let rows = [("montage_01.mp4", "correct", "0", "2.5"), ("montage_01.mp4", "wrong", "2.5", "4.0"),
                    ("montage_02.mp4", "correct", "0:01.5", "0:03")]
        try ("video,label,start,end\n" + rows.map { "\($0.0),\($0.1),\($0.2),\($0.3)" }.joined(separator: "\n") + "\n")
            .write(toFile: s("annotations.csv"), atomically: true, encoding: .utf8)
        let json = rows.map { "{\"video\": \"\($0.0)\", \"label\": \"\($0.1)\", \"start\": \"\($0.2)\", \"end\": \"\($0.3)\"}" }
        try ("[" + json.joined(separator: ", ") + "]\n").write(toFile: s("annotations.json"), atomically: true, encoding: .utf8)
        for (from, to) in [(configYAML, "config.yaml"), (samples + "/coco/pushup/clip2.json", "coco.json"),
                           (samples + "/mediapipe/pushup/clip3.json", "mediapipe.json"),
                           (samples + "/ntu/S001C001P001R001A010.skeleton", "sample.skeleton"),
                           (samples + "/openpose/pushup/clip1", "openpose")] {
            try? fm.removeItem(atPath: s(to))
            try fm.copyItem(atPath: from, toPath: s(to))
        }
        // A scene's truth, as `throws render` writes it: a cluttered one, so that hidden
        // stretches, bounces and stray balls are read too.
        let truth = ThrowSceneTruth(scene: ThrowScenes.clutterSet(throwCount: 2, seed: 3)[0], clip: "throw001.mp4")
        try JSONLines.document(truth).write(to: URL(fileURLWithPath: s("truth.json")))
        // A model's proposals for the studio's label view, as `annotate --timeline NAME.json` writes them.
        let occurrences = [OccurrenceLine(person: 1, label: "correct", start: 0.5, end: 3.25, peakConfidence: 0.97, meanConfidence: 0.9, repetitions: 2),
                           OccurrenceLine(person: 2, label: "wrong", start: 4, end: 6.5, peakConfidence: 0.8, meanConfidence: 0.7, repetitions: 1)]
        let throwMade = ThrowLine(person: 1, trajectory: 1, release: 1.25, releaseX: 300, releaseY: 200, throwType: "overhand", typeConfidence: 0.9,
                                  arm: "right", releaseAngle: 31, launchAngle: 20, speed: 7.5, speedUnit: "m/s", hit: true)
        try TimelineFile(occurrences: occurrences, throwsMade: [throwMade]).text.write(toFile: s("proposals.json"), atomically: true, encoding: .utf8)
        // The studio's pose lines: frames of `pose --json` from a clip of the store.
        let clip = clips[0]
        var lines: [String] = []
        for f in 0..<min(clip.frameCount, 40) {
            let j = clip.jointNames.count
            let landmarks = (0..<j).map { k -> [String: Any] in
                ["name": clip.jointNames[k], "x": Double(clip.keypoints[(f * j + k) * 3]) * Double(clip.width),
                 "y": Double(clip.keypoints[(f * j + k) * 3 + 1]) * Double(clip.height), "visibility": Double(clip.keypoints[(f * j + k) * 3 + 2])]
            }.map { $0.mapValues { ($0 as? Double).map { $0.isFinite ? $0 : -1 } ?? $0 } }
            let frame: [String: Any] = ["time": clip.times[f], "width": clip.width, "height": clip.height,
                                        "persons": [["prominent": true, "landmarks": landmarks]]]
            lines.append(String(decoding: try JSONSerialization.data(withJSONObject: frame), as: UTF8.self))
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: s("poses.jsonl"), atomically: true, encoding: .utf8)
        // A cache entry, as `extract --cache` keeps one.
        let cache = try ExtractionCache(folder: s("cache"))
        var entry = clip
        entry.estimator = cacheEstimator; entry.modelHash = cacheModelHash
        try cache.save(cacheKey, entry, warnings: ["a warning"])
        try? fm.removeItem(atPath: s("cache-entry.h5"))
        try fm.copyItem(atPath: s("cache/ab/\(cacheKey).h5"), toPath: s("cache-entry.h5"))
        if let models {
            for m in ["pose_detection.tflite", "pose_landmark_full.tflite"] where fm.fileExists(atPath: models + "/" + m) {
                try? fm.removeItem(atPath: s(m))
                try fm.copyItem(atPath: models + "/" + m, toPath: s(m))
            }
        }
    }
}
