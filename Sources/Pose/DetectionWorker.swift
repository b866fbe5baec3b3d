import Foundation
import Images

/// The person detector on a thread of its own (`PipelineOptions.detectInBackground`): while
/// people are followed, the frame's thread hands a frame over and goes on with their poses;
/// the detections are taken up on a later frame. One detection at a time: a frame handed over
/// while one is under way is refused, and the caller tries again on a later frame.
final class DetectionWorker: @unchecked Sendable {
    struct Result {
        /// Each detection as the region of interest the landmark model takes, best first.
        var rois: [RotatedRect]
        var seconds: Double
    }
    private struct Job { var image: RGBImage; var tiles: [RotatedRect]; var limit: Int; var generation: Int }

    private let detector: PoseDetector
    private let condition = NSCondition()
    private var job: Job?
    private var result: (Result, generation: Int)?
    private var running = false
    private var closed = false
    /// Results of jobs handed over before the last `discard()` are dropped.
    private var generation = 0

    init(detector: PoseDetector) {
        self.detector = detector
        let thread = Thread { [self] in
            // Below the frames' priority, as the classifier's threads: when the cores are
            // short, newcomers are found a few frames later and no frame waits.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            loop()
        }
        thread.name = "poseact-detector"
        thread.start()
    }

    /// Hands `image` over; false if a detection is still under way or its result not yet taken.
    func submit(_ image: RGBImage, tiles: [RotatedRect], limit: Int) -> Bool {
        condition.lock(); defer { condition.unlock() }
        guard !closed, job == nil, !running, result == nil else { return false }
        job = Job(image: image, tiles: tiles, limit: limit, generation: generation)
        condition.broadcast()
        return true
    }

    /// The finished detection, once.
    func take() -> Result? {
        condition.lock(); defer { condition.unlock() }
        guard let (done, from) = result else { return nil }
        result = nil
        return from == generation ? done : nil
    }

    /// Forgets the detection under way (the people it would add are no longer followed).
    func discard() {
        condition.lock(); defer { condition.unlock() }
        generation += 1; job = nil; result = nil
    }

    func close() {
        condition.lock(); closed = true; job = nil; condition.broadcast(); condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while job == nil && !closed { condition.wait() }
            guard !closed, let next = job else { condition.unlock(); return }
            job = nil; running = true
            condition.unlock()
            let start = DispatchTime.now().uptimeNanoseconds
            var detections = detector.detect(next.image)
            for tile in next.tiles { detections += detector.detect(next.image, region: tile) }
            if !next.tiles.isEmpty { detections = PosePipeline.distinct(detections) }
            let rois = detections.prefix(next.limit).map {
                regionOfInterest(center: $0.keypoints[0], scalePoint: $0.keypoints[1], imageWidth: next.image.width, imageHeight: next.image.height)
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            condition.lock()
            running = false
            if next.generation == generation { result = (Result(rois: rois, seconds: seconds), next.generation) }
            condition.unlock()
        }
    }
}
