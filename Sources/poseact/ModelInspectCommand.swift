import ArgumentParser
import Basics
import Classifier
import Foundation
import Keypoints
import KeypointWindows
import MatrixProduct
import TFLite

extension ModelCommand {
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what is inside a weights file (.poseact.h5) or a .tflite model.",
            discussion: """
                A weights file: its labels, preprocessing (joints, frame rate, window, stride, \
                normalisation, features), architecture, parameters and the record of the run \
                that trained it (data, epochs, validation and test accuracy).

                A .tflite model: its inputs, outputs, operators, parameters and FLOPs. The file \
                is read with poseact's own TFLite reader and planned by its engine, so this also \
                checks that poseact can run it: an unsupported operator or a damaged file is \
                reported here, as one line, with a non-zero exit.
                """)

        @Argument(help: "A weights file (.poseact.h5, or a run folder) or a .tflite model file.")
        var file: String

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        /// `--json` for a .tflite file.
        struct TFLiteSummary: Encodable {
            struct Tensor: Encodable { var name: String; var shape: [Int] }
            var file: String
            var bytes: Int, version: Int
            var description: String
            var inputs: [Tensor], outputs: [Tensor]
            /// Operator kind → how many the file holds.
            var operators: [String: Int]
            var operatorsPerRun: Int, foldedAtLoad: Int, fusedIntoNeighbours: Int
            var parameters: Int, flops: Int
            var arenaBytes: Int, weightBytes: Int
            /// The instruction set the convolutions run on here (avx512, avx2, portable).
            var kernels: String

            enum CodingKeys: String, CodingKey {
                case file, bytes, version, description, inputs, outputs, operators, parameters, flops, kernels
                case operatorsPerRun, foldedAtLoad
                case fusedIntoNeighbours = "fused"
                case arenaBytes, weightBytes
            }
        }

        /// `--json` for a weights file: what it needs to run, and the figures of the run
        /// that made it (absent for an ensemble, whose members' records are in the file).
        struct WeightsSummary: Encodable {
            /// The test figures, without the per-class detail.
            struct Test: Encodable {
                var clipAccuracy: Double, windowAccuracy: Double
                var clips: Int
                var split: String?

                enum CodingKeys: String, CodingKey { case clips, split, clipAccuracy, windowAccuracy = "window_accuracy"}

                func encode(to encoder: Encoder) throws {
                    var c = encoder.container(keyedBy: CodingKeys.self)
                    try c.encode(clipAccuracy, forKey: .clipAccuracy)
                    try c.encode(windowAccuracy, forKey: .windowAccuracy)
                    try c.encode(clips, forKey: .clips)
                    try c.encode(split, forKey: .split)   // null, not left out
                }
            }

            var file: String
            var format: String
            var labels: [String]
            var preprocessing: PreprocessingSpec
            var architecture: Architecture
            var parameters: Int
            /// `ActionClassifier.weightsSHA256`: the same for the same weights, whenever written.
            var weightsSHA256: String
            var members: Int
            /// Each member's stream, features, weight and architecture (multi-stream files only).
            var streams: [Member.Record]?
            var record: TrainingRecord
            var test: Test?

            enum CodingKeys: String, CodingKey {
                case file, format, labels, preprocessing, architecture, parameters, members, streams, test
                case weightsSHA256
            }

            init(file: String, classifier c: ActionClassifier) {
                self.file = file; format = ActionClassifier.format; labels = c.labels; preprocessing = c.spec
                architecture = c.architecture; parameters = c.parameterCount; members = c.members.count; record = c.training
                weightsSHA256 = c.weightsSHA256
                streams = c.isMultiStream ? c.members.map(\.record) : nil
                test = c.training.test.map { Test(clipAccuracy: $0.clips.accuracy, windowAccuracy: $0.windows.accuracy,
                                                  clips: $0.clips.count, split: $0.split) }
            }

            func encode(to encoder: Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(file, forKey: .file)
                try c.encode(format, forKey: .format)
                try c.encode(labels, forKey: .labels)
                try c.encode(preprocessing, forKey: .preprocessing)
                try c.encode(architecture, forKey: .architecture)
                try c.encode(parameters, forKey: .parameters)
                try c.encode(weightsSHA256, forKey: .weightsSHA256)
                try c.encode(members, forKey: .members)
                try c.encodeIfPresent(streams, forKey: .streams)
                try c.encodeIfPresent(test, forKey: .test)
                try record.encodeRun(to: encoder)
            }
        }

        func run() throws {
            let weights = modelPath(file)
            // What keeps the file from being read at all (missing, a FIFO, permissions) first.
            do { try InputFile.check(weights) } catch let error as InputFileError { throw ModelFileError(error.message) }
            if HDF5.isHDF5(weights) { try inspectWeights(weights); return }
            // Said by what the file is meant to be, not "not a TFLite model" for every file.
            let ext = URL(fileURLWithPath: file).pathExtension.lowercased()
            if ["h5", "hdf5"].contains(ext) {
                throw ModelFileError("\(file): not an HDF5 file, so not a poseact weights file (damaged, or another file under an .h5 name)")
            }
            if ext == "onnx" {
                throw ModelFileError("\(file): an ONNX file; model inspect reads TFLite models and poseact weights files (.poseact.h5): inspect the weights file the ONNX was exported from")
            }
            let model: ModelFile
            do { model = try ModelFile(path: file) } catch let error as TFLiteError where ext != "tflite" && !error.message.contains(" MB, over the ") {
                _ = error
                throw ModelFileError("\(file): neither a TFLite model (.tflite) nor a poseact weights file (.poseact.h5)")
            }
            let plan: Interpreter
            do { plan = try Interpreter(model: model, options: .init(threads: 1)) } catch let error as TFLiteError {
                throw TFLiteError("\(file): \(error.message)")
            }
            let s = plan.summary
            if json {
                print(JSONLines.encode(TFLiteSummary(
                    file: file, bytes: model.bytes.count, version: Int(model.version), description: model.description,
                    inputs: plan.inputs.map { .init(name: $0.name, shape: $0.shape) },
                    outputs: plan.outputs.map { .init(name: $0.name, shape: $0.shape) },
                    operators: s.operators, operatorsPerRun: s.plannedOperators, foldedAtLoad: s.foldedOperators,
                    fusedIntoNeighbours: s.fusedOperators,
                    parameters: s.parameters, flops: s.flops, arenaBytes: s.arenaBytes, weightBytes: s.weightBytes,
                    kernels: plan.kernelPath.rawValue)))
                return
            }
            print("\(file): TFLite schema v\(model.version), \(model.bytes.count) bytes\(model.description.isEmpty ? "" : ", \"\(model.description)\"")")
            for i in plan.inputs { print("  input   \(i.name) \(i.shape) float32") }
            for o in plan.outputs { print("  output  \(o.name) \(o.shape) float32") }
            print("  operators (\(s.operators.values.reduce(0, +)) in the file):")
            for (name, count) in s.operators.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
                print("    \(name.padding(toLength: 20, withPad: " ", startingAt: 0)) \(count)")
            }
            print("  per run: \(s.plannedOperators) kernels (\(s.foldedOperators) operators folded at load, \(s.fusedOperators) PADs and ADDs fused into their neighbours)")
            print(String(format: "  parameters: %.2f M (%.1f MB as float32)", Double(s.parameters) / 1e6, Double(s.weightBytes) / 1e6))
            print(String(format: "  work: %.3f GFLOP per run (a multiply-add counts 2)", Double(s.flops) / 1e9))
            print(String(format: "  activations: %.1f MB arena", Double(s.arenaBytes) / 1e6))
            print("  kernels: \(plan.kernelPath) (this CPU runs \(KernelPath.supported.map(\.rawValue).joined(separator: ", ")); \(KernelPath.environmentVariable) forces one)")
        }

        func inspectWeights(_ path: String) throws {
            let c = try ActionClassifier.load(path: path)
            if json {
                print(JSONLines.encode(WeightsSummary(file: path, classifier: c)))
                return
            }
            let s = c.spec, a = c.architecture
            print("\(path): poseact weights file" + (c.members.count > 1 ? ", an ensemble of \(c.members.count) nets (their probabilities averaged)" : ""))
            print("  labels (\(c.labels.count)): \(c.labels.joined(separator: ", "))")
            print("  preprocessing: \(s.joints.count) joints (\(s.joints.joined(separator: ", "))), \(s.fps) fps, window \(s.window), "
                  + "stride \(s.stride), \(s.normalization.rawValue) normalisation, features \(s.features.map(\.rawValue).joined(separator: "+")), "
                  + "min pose share \(s.minPoseShare)")
            func describe(_ a: Architecture) -> String {
                "\(a.type.rawValue), \(a.inputChannels) input channels × \(a.frames) frames, "
                    + (!a.isGraph ? "\(a.channels) channels, dilations \(a.dilations), kernel \(a.kernel), \(a.pooling.rawValue) pooling"
                                       : "blocks \(a.blocks)")
                    + ", dropout \(a.dropout)"
            }
            if c.isMultiStream {
                print("  model: \(c.members.count) streams, probabilities weighted \(c.members.map { String(format: "%g", $0.weight) }.joined(separator: ":"))"
                      + (a.flipAverage ? ", averaged with the mirror image" : "") + "; \(c.parameterCount) parameters")
                for m in c.members {
                    print("    \(m.stream?.rawValue ?? "net") (\(m.features.map(\.rawValue).joined(separator: "+"))): \(describe(m.architecture)); "
                          + "\(m.net.parameterCount) parameters")
                }
            } else {
                print("  model: \(describe(a))" + (a.flipAverage ? ", predictions averaged with the mirror image" : "")
                      + "; \(c.parameterCount) parameters" + (c.members.count > 1 ? " (\(c.model.parameterCount) per net)" : ""))
            }
            let record = c.training
            for (i, m) in (record.members ?? []).enumerated() {
                let name = c.isMultiStream && i < c.members.count ? c.members[i].stream?.rawValue ?? "member \(i + 1)" : "member \(i + 1)"
                var line = "  \(name): " + (m.config.map { "seed \($0.training.seed)" } ?? "seed unknown")
                if let t = m.test { line += String(format: ", its test clip accuracy %.2f%%", t.clips.accuracy * 100) }
                print(line)
            }
            if let e = record.epochs {
                let best = record.bestEpoch ?? 0
                var line = "  training: \(e) epochs, the model is epoch \(record.keptEpoch ?? best)"
                if let v = record.validationAccuracy { line += String(format: " (validation accuracy %.2f%%)", v * 100) }
                line += ", best validation epoch \(best)"
                print(line)
            }
            if let data = record.data { print("  data: \(data.path)") }
            for e in record.enrolled ?? [] {
                print("  enrolled from \(e.data): " + e.clips.keys.sorted().map { "\($0) (\(e.clips[$0]!) clips)" }.joined(separator: ", "))
            }
            print("  weights sha256: \(c.weightsSHA256) (the same weights give the same digest, whenever written)")
            if let test = record.test {
                print(String(format: "  test (%@): clip accuracy %.2f%%, window accuracy %.2f%%", test.split ?? "",
                             test.clips.accuracy * 100, test.windows.accuracy * 100))
            }
        }
    }
}
