import ArgumentParser
import Dataset

// Checks of flags that several commands share, made in their `validate()`.

/// A frame rate within PreprocessingSpec's bound.
func validateFPS(_ fps: Double) throws {
    guard fps > 0, fps <= PreprocessingSpec.maxFPS else {
        throw ValidationError("--fps must be in (0, \(Int(PreprocessingSpec.maxFPS))] frames per second (got \(fps))")
    }
}

/// The options `live` and `annotate` both pass to the live pipeline.
func validateLiveOptions(threads: Int, maxPeople: Int, smooth: Int, minConfidence: Float) throws {
    guard threads >= 1, maxPeople >= 1, smooth >= 1 else {
        throw ValidationError("--threads, --max-people and --smooth must be at least 1")
    }
    guard (0...1).contains(minConfidence) else { throw ValidationError("--min-confidence must be in 0…1 (got \(minConfidence))") }
}
