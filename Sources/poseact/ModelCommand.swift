import ArgumentParser
import Foundation
import TFLite

struct ModelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model", abstract: "Look inside model files.", subcommands: [Inspect.self])

    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a .tflite model's inputs, outputs, operators, parameters and FLOPs.",
            discussion: """
                The file is read with poseact's own TFLite reader and planned by its engine, so \
                this also checks that poseact can run it: an unsupported operator or a damaged \
                file is reported here, as one line, with a non-zero exit.
                """)

        @Argument(help: "A .tflite model file.")
        var file: String

        @Flag(help: "Print one JSON object instead of text.")
        var json = false

        func run() throws {
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
    }
}
