import ArgumentParser
import Classifier
import Dataset
import Foundation
import TFLite

struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model", abstract: "Look inside model files.", subcommands: [Inspect.self])

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

        func run() throws {
            let weights = modelPath(file)
            if HDF5.isHDF5(weights) { try inspectWeights(weights); return }
            let model = try ModelFile(path: file)
            let plan: Interpreter
            do { plan = try Interpreter(model: model, options: .init(threads: 1)) } catch let error as TFLiteError {
                throw TFLiteError("\(file): \(error.message)")
            }
            let s = plan.summary
            if json {
                let object: [String: Any] = [
                    "file": file, "bytes": model.bytes.count, "version": Int(model.version),
                    "description": model.description,
                    "inputs": plan.inputs.map { ["name": $0.name, "shape": $0.shape] },
                    "outputs": plan.outputs.map { ["name": $0.name, "shape": $0.shape] },
                    "operators": s.operators, "operators_per_run": s.plannedOperators,
                    "folded_at_load": s.foldedOperators, "parameters": s.parameters, "flops": s.flops,
                    "arena_bytes": s.arenaBytes, "weight_bytes": s.weightBytes,
                ]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print("\(file): TFLite schema v\(model.version), \(model.bytes.count) bytes\(model.description.isEmpty ? "" : ", \"\(model.description)\"")")
            for i in plan.inputs { print("  input   \(i.name) \(i.shape) float32") }
            for o in plan.outputs { print("  output  \(o.name) \(o.shape) float32") }
            print("  operators (\(s.operators.values.reduce(0, +)) in the file):")
            for (name, count) in s.operators.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
                print("    \(name.padding(toLength: 20, withPad: " ", startingAt: 0)) \(count)")
            }
            print("  per run: \(s.plannedOperators) kernels (\(s.foldedOperators) operators folded at load)")
            print(String(format: "  parameters: %.2f M (%.1f MB as float32)", Double(s.parameters) / 1e6, Double(s.weightBytes) / 1e6))
            print(String(format: "  work: %.3f GFLOP per run (a multiply-add counts 2)", Double(s.flops) / 1e9))
            print(String(format: "  activations: %.1f MB arena", Double(s.arenaBytes) / 1e6))
        }

        func inspectWeights(_ path: String) throws {
            let c = try ActionClassifier.load(path: path)
            let record = (try? JSONSerialization.jsonObject(with: Data(c.training.utf8))) as? [String: Any] ?? [:]
            let spec = (try? JSONSerialization.jsonObject(with: Data(c.spec.json().utf8))) ?? [:]
            let arch = (try? JSONSerialization.jsonObject(with: Data(jsonText(c.architecture).utf8))) ?? [:]
            let test = record["test"] as? [String: Any]
            if json {
                var object: [String: Any] = ["file": path, "format": ActionClassifier.format, "labels": c.labels,
                                             "preprocessing": spec, "architecture": arch, "parameters": c.parameterCount,
                                             "members": c.members.count]
                for key in ["epochs", "best_epoch", "kept_epoch", "validation_accuracy", "validation_loss", "data"] { object[key] = record[key] }
                if let test {
                    object["test"] = ["clip_accuracy": test["clip_accuracy"] ?? NSNull(), "window_accuracy": test["window_accuracy"] ?? NSNull(),
                                      "clips": test["clips"] ?? NSNull(), "split": test["split"] ?? NSNull()]
                }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            let s = c.spec, a = c.architecture
            print("\(path): poseact weights file" + (c.members.count > 1 ? ", an ensemble of \(c.members.count) nets (their probabilities averaged)" : ""))
            print("  labels (\(c.labels.count)): \(c.labels.joined(separator: ", "))")
            print("  preprocessing: \(s.joints.count) joints (\(s.joints.joined(separator: ", "))), \(s.fps) fps, window \(s.window), "
                  + "stride \(s.stride), \(s.normalization.rawValue) normalisation, features \(s.features.map(\.rawValue).joined(separator: "+")), "
                  + "min pose share \(s.minPoseShare)")
            print("  model: \(a.type), \(a.inputChannels) input channels × \(a.frames) frames, \(a.channels) channels, dilations \(a.dilations), "
                  + "kernel \(a.kernel), dropout \(a.dropout), \(a.pooling.rawValue) pooling"
                  + (a.flipAverage ? ", predictions averaged with the mirror image" : "") + "; \(c.parameterCount) parameters"
                  + (c.members.count > 1 ? " (\(c.model.parameterCount) per net)" : ""))
            if let members = record["members"] as? [[String: Any]] {
                for (i, m) in members.enumerated() {
                    let seed = ((m["config"] as? [String: Any])?["training"] as? [String: Any])?["seed"]
                    let t = m["test"] as? [String: Any]
                    var line = "  member \(i + 1): " + (seed.map { "seed \($0)" } ?? "seed unknown")
                    if let t, let ca = t["clip_accuracy"] as? Double { line += String(format: ", its test clip accuracy %.2f%%", ca * 100) }
                    print(line)
                }
            }
            if let e = record["epochs"] as? Int {
                let best = record["best_epoch"] as? Int ?? 0
                var line = "  training: \(e) epochs, the model is epoch \(record["kept_epoch"] as? Int ?? best)"
                if let v = record["validation_accuracy"] as? Double { line += String(format: " (validation accuracy %.2f%%)", v * 100) }
                line += ", best validation epoch \(best)"
                print(line)
            }
            if let data = record["data"] as? [String: Any], let p = data["path"] as? String { print("  data: \(p)") }
            if let test, let ca = test["clip_accuracy"] as? Double, let wa = test["window_accuracy"] as? Double {
                print(String(format: "  test (%@): clip accuracy %.2f%%, window accuracy %.2f%%", test["split"] as? String ?? "", ca * 100, wa * 100))
            }
        }
    }
}
