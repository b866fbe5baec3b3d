import ArgumentParser
import Foundation
import KeypointWindows
import MatrixProduct
import Pose

// Flags several commands take, declared once.

/// --models: where the BlazePose model files are; --bfloat16: how they multiply.
struct PoseModelsOption: ParsableArguments {
    @Option(help: "Folder with the .tflite files.") var models: String?
    @Flag(help: ArgumentHelp("Multiply the pose models' convolutions in bfloat16, on CPUs with AVX512_BF16 (Zen 4 and later, Sapphire Rapids; 1.3–1.6× faster) or ARM's BF16 (Graviton 3 and 4, Neoverse V1/V2/N2, Cortex-A710 and later; not measured): landmarks a median of ~1.5 px from MediaPipe's on 1080p frames instead of 0.01 (docs/engine.md).",
                             discussion: "The same as POSEACT_KERNELS=avx512bf16 (neonbf16 on ARM64)."))
    var bfloat16 = false

    func validate() throws {
        if bfloat16 { try KernelPath.requestBFloat16() }
    }

    /// The detector's and the landmark model's paths.
    func paths() throws -> (detector: String, landmark: String) {
        let dir = try PoseModels.directory(models)
        return (dir.appendingPathComponent(PoseModels.detector).path, dir.appendingPathComponent(PoseModels.landmark).path)
    }

    /// The model files as inputs for `OutputPaths.check` (none when they are not found: said later).
    var inputs: [(flag: String, path: String)] {
        guard let (detector, landmark) = try? paths() else { return [] }
        return [("the pose detector model", detector), ("the pose landmark model", landmark)]
    }

    func pipeline(_ options: PipelineOptions) throws -> PosePipeline {
        let (detector, landmark) = try paths()
        return try PosePipeline(detectorPath: detector, landmarkPath: landmark, options: options)
    }
}

/// The models and the threads each of their inferences takes.
struct InferenceOptions: ParsableArguments {
    @OptionGroup var models: PoseModelsOption
    @Option(parsing: .unconditional, help: "Threads per model inference.") var threads = 2
    func validate() throws {
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1 (got \(threads))") }
    }
}

/// The pose pipeline: the models, threads, and how many people it tracks.
struct PosePipelineOptions: ParsableArguments {
    @OptionGroup var inference: InferenceOptions
    @Option(parsing: .unconditional, help: "People tracked per frame.") var maxPeople = 4
    @Flag(inversion: .prefixedNo,
          help: "In a frame wider or taller than 3:2, also look for people in squares of its short side (smaller people are found).")
    var detectTiles = true
    @Flag(inversion: .prefixedNo,
          help: "With two or more people, each core runs a whole person's landmark model at a time (else every model run is split over the cores).")
    var personPerCore = true
    @Option(parsing: .unconditional,
            help: "Hold a person's pose for one frame, without a landmark run, when their landmarks moved less than this share of their region's width between their last two posed frames (0: pose everyone on every frame).")
    var stillness: Float = 0
    @Flag(inversion: .prefixedNo,
          help: "Live sources: while anyone is followed, look for newcomers on the detector's own thread, so that no frame waits for it (annotate and extract always detect on the frame).")
    var backgroundDetector = true
    @Flag(inversion: .prefixedNo,
          help: "Live sources: when a frame's people would be posed too late to keep the next frame, those who moved least keep their last pose for that frame (never two in a row) rather than a frame being dropped.")
    var holdWhenLate = true

    func validate() throws {
        guard maxPeople >= 1 else { throw ValidationError("--max-people must be at least 1 (got \(maxPeople))") }
        guard maxPeople <= PipelineOptions.mostPeople else { throw ValidationError("--max-people \(maxPeople): at most \(PipelineOptions.mostPeople)") }
        guard stillness >= 0, stillness < 1 else { throw ValidationError("--stillness must be 0 or more and below 1 (got \(stillness))") }
    }

    func pipeline(smoothing: Bool = false) throws -> PosePipeline {
        var options = PipelineOptions(maxPeople: maxPeople, smoothing: smoothing, threads: inference.threads)
        options.detectInTiles = detectTiles
        options.personPerCore = personPerCore
        options.stillness = stillness
        return try inference.models.pipeline(options)
    }
}

/// A frame rate within PreprocessingSpec's bound.
func validateFPS(_ fps: Double) throws {
    guard fps > 0, fps <= PreprocessingSpec.maxFPS else {
        throw ValidationError("--fps must be in (0, \(Int(PreprocessingSpec.maxFPS))] frames per second (got \(fps))")
    }
}
