import ArgumentParser
import Classifier
import Dataset
import Foundation
import Live
import LiveView
import Media
import Pose

/// Ctrl-C and SIGTERM, taken on a dispatch queue (not in a signal handler): they stop the
/// live pipeline (whose summary is still printed) and end the wait after the input.
enum Interrupt {
    nonisolated(unsafe) static var pipeline: LivePipeline?
    private static let lock = NSLock()
    nonisolated(unsafe) private static var received = false
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static var happened: Bool { lock.lock(); defer { lock.unlock() }; return received }

    static func install(stopping live: LivePipeline) {
        pipeline = live
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                lock.lock(); received = true; lock.unlock()
                pipeline?.stop()
            }
            source.resume()
            sources.append(source)
        }
    }
}

func makeLivePipeline(model: String, models: String?, maxPeople: Int, threads: Int, minConfidence: Float,
                      smooth: Int) throws -> LivePipeline {
    let classifier = try ActionClassifier.load(path: modelPath(model))
    let dir = try PoseModels.directory(models)
    let pipeline = try PosePipeline(detectorPath: dir.appendingPathComponent(PoseModels.detector).path,
                                    landmarkPath: dir.appendingPathComponent(PoseModels.landmark).path,
                                    options: PipelineOptions(maxPeople: maxPeople, threads: threads))
    return LivePipeline(pipeline: pipeline, recognizer: ActionRecognizer(classifier: classifier, minConfidence: minConfidence,
                                                                         smoothing: smooth))
}

struct LiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Run a trained model in real time on a camera, a stream or a file.",
        discussion: """
            The model file supplies the frame rate, window, stride, joints and normalisation; \
            the frames go through the same preprocessing as training. Capture, pose and \
            classification run concurrently: the newest frame is processed, late frames are \
            dropped and counted, never queued. A prediction comes every `stride` frames on the \
            prominent person's last window: "no person" when fewer than 60 % of its frames hold \
            a pose, "low confidence" under --min-confidence, else the action and its \
            probability. A file plays at its own speed, as if live, unless \
            --as-fast-as-possible. --json prints one line per prediction and per change of \
            state; --record writes the video with the overlay. At the end (input over, \
            Ctrl-C) a summary: seconds per action. A stream that stops sending for --timeout \
            seconds ends the run with one line saying so, the summary, and exit status 1.

            --serve PORT serves a page at http://127.0.0.1:PORT/ with the video, the \
            wireframes, the action and its confidence, the fps and the seconds per action, \
            updated live (over a WebSocket; /state.json and /frame.jpg for scripts). \
            --serve-host 0.0.0.0 serves it to the network, to those given the URL printed at \
            start (it holds a token; other requests get 403). Requests from other web pages \
            (another Origin) are refused. --window shows the same overlay \
            in a window on the desktop (q or Esc closes it). When the input ends, the page or \
            the window keeps the last frame and the summary until Ctrl-C (or the window is \
            closed).
            """)

    @Option(help: "A weights file (.poseact.h5) or a run folder.") var model: String
    @Option(help: "A V4L2 camera (default: the first, /dev/video0 usually, when no --input).") var camera: String?
    @Option(help: "A file or a stream URL (rtsp://, http://, udp://).") var input: String?
    @Flag(help: "Read a file as fast as it can be processed, not at its own speed.") var asFastAsPossible = false
    @Option(parsing: .unconditional, help: "Seconds to wait for a stream or camera before giving up.") var timeout = 5.0
    @Option(parsing: .unconditional, help: "Under this probability the state is 'low confidence'.") var minConfidence: Float = 0.6
    @Option(parsing: .unconditional, help: "Predictions averaged into each one shown (1: none).") var smooth = 1
    @Option(help: "Write the video with the overlay here (.mp4).") var record: String?
    @Option(parsing: .unconditional, help: "People tracked per frame (the prominent one is classified).") var maxPeople = 4
    @Option(parsing: .unconditional, help: "Threads per inference.") var threads = 2
    @Option(help: "Folder with the .tflite files.") var models: String?
    @Option(help: ArgumentHelp("Serve a live page on this port (0: any free port).", valueName: "port")) var serve: Int?
    @Option(help: ArgumentHelp("The address --serve listens on (0.0.0.0: every network).", valueName: "address"))
    var serveHost = "127.0.0.1"
    @Flag(help: "Show the video with the overlay in a window (needs a desktop: $DISPLAY).") var window = false
    @Flag(help: "Print events as JSON Lines on stdout.") var json = false

    func validate() throws {
        try validateLiveOptions(threads: threads, maxPeople: maxPeople, smooth: smooth, minConfidence: minConfidence)
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds (got \(timeout))") }
        if let serve, !(0...65535).contains(serve) { throw ValidationError("--serve takes a port 0…65535 (got \(serve))") }
        if let record {
            try OutputPaths.check(record, flag: "--record", inputs: [("--model", modelPath(model))]
                                  + (input.map { [("--input", $0)] } ?? []) + (camera.map { [("--camera", $0)] } ?? []))
        }
    }

    func run() throws {
        let source = input ?? camera ?? listCameras().first ?? "/dev/video0"   // (absent: says there is no camera)
        let live = try makeLivePipeline(model: model, models: models, maxPeople: maxPeople, threads: threads,
                                        minConfidence: minConfidence, smooth: smooth)
        live.asFastAsPossible = asFastAsPossible
        live.timeout = timeout
        live.drawOverlay = record != nil || serve != nil || window
        // The viewers open before the input, so that a wrong port or a missing display is
        // said at once.
        let name = URL(fileURLWithPath: model).deletingPathExtension().deletingPathExtension().lastPathComponent
        let board = LiveBoard(model: name)
        let page = try serve.map { try BrowserView(board: board, host: serveHost, port: $0) }
        if let page { note("live page: \(page.url)") }
        var shown: LiveWindow?
        if window {
            shown = try LiveWindow(title: "poseact live: \(name)", width: 640, height: 480)
        }
        var writer: VideoWriter?
        Interrupt.install(stopping: live)
        let stats = try live.run(input: source) { event in
            if page != nil { board.handle(event) }
            if let shown {
                if case .frame(let image, _) = event { shown.show(image) } else { shown.pollEvents() }
                if shown.closed { live.stop() }
            }
            switch event {
            case .prediction(let p, let fps, let dropped):
                if json {
                    var line = JSONLine()
                    line.add("type", "prediction"); line.add("time", round3(p.time)); line.add("person", p.personID ?? -1)
                    line.add("label", p.state.name); line.add("confidence", Double(p.state.confidence ?? 0))
                    line.add("fps", (fps * 10).rounded() / 10); line.add("dropped", dropped)
                    print(line.text); fflush(stdout)
                }
            case .stateChange(let from, let to, let time, let person):
                if json {
                    var line = JSONLine()
                    line.add("type", "state"); line.add("time", round3(time)); line.add("person", person ?? -1)
                    line.add("from", from ?? "none"); line.add("to", to)
                    print(line.text); fflush(stdout)
                } else {
                    print(String(format: "%8.2f s  %@", time, to)); fflush(stdout)
                }
            case .frame(let image, _):
                if let record {
                    do {
                        if writer == nil {
                            writer = try VideoWriter(path: record, width: image.width, height: image.height,
                                                     fps: live.recognizer.spec.fps)
                        }
                        try writer?.write(image)
                    } catch {
                        note("warning: \(record): \(error); recording stopped")
                    }
                }
            }
        }
        try writer?.finish()   // (VideoWriter writes to a temporary file and renames it when finished)
        let ending = stats.error.map { "the input stopped: \($0)" } ?? (Interrupt.happened ? "stopped" : "the input ended")
        if stats.error != nil { note(ending) }
        printSummary(stats)
        fflush(stdout)   // seen now, not when the page or the window is closed
        board.finish(summary: stats.summary, message: ending)
        // Whoever watches sees the end: the last frame and the summary stay until Ctrl-C.
        if (page != nil || shown != nil) && !Interrupt.happened && !(shown?.closed ?? false) {
            note("\(ending); \(page.map { "the page stays at \($0.url)" } ?? "the window stays open") until Ctrl-C")
            while !Interrupt.happened && !(shown?.closed ?? false) {
                shown?.pollEvents()
                usleep(20_000)
            }
        }
        page?.stop()
        if stats.error != nil { throw ExitCode(1) }   // a stream that broke off: said above, summary printed
    }

    func printSummary(_ stats: LiveStats) {
        let lat = stats.latencies.sorted()
        if json {
            var line = JSONLine()
            line.add("type", "summary"); line.add("frames", stats.frames); line.add("dropped_frames", stats.dropped)
            line.add("fps", round3(stats.fps)); line.add("latency_ms_median", round3(percentile(lat, 0.5)))
            line.add("latency_ms_p95", round3(percentile(lat, 0.95))); line.add("seconds", stats.summary.seconds)
            print(line.text)
            return
        }
        print(String(format: "summary: %d frames in %.1f s (%.1f fps), %d dropped; latency median %.0f ms, p95 %.0f ms",
                     stats.frames, stats.seconds, stats.fps, stats.dropped, percentile(lat, 0.5), percentile(lat, 0.95)))
        for line in stats.summary.lines { print("  " + line) }
    }
}

struct LiveBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Time the live pipeline on a video played at its own speed.",
        discussion: """
            The file plays as a live source at its frame rate (30 fps for the model's default) \
            through capture, pose, classification and the overlay; --copies N tiles each \
            frame N times (as it is captured), for N people. Prints one JSON object: \
            fps (frames processed per second), dropped_frames, latency_ms_median and \
            latency_ms_p95 (frame capture to overlay and prediction), frames, predictions.
            """)

    @Option(help: "A weights file (.poseact.h5) or a run folder.") var model: String
    @Option(help: "The video to play as a live source.") var input: String
    @Option(parsing: .unconditional, help: "Stop after this many frames (0: the whole video).") var frames = 0
    @Option(parsing: .unconditional, help: "Put this many copies of each frame in a grid: that many people to track.") var copies = 1
    @Option(parsing: .unconditional, help: "People tracked per frame.") var maxPeople = 4
    @Option(parsing: .unconditional, help: "Threads per inference.") var threads = 2
    @Option(help: "Folder with the .tflite files.") var models: String?

    func run() throws {
        let live = try makeLivePipeline(model: model, models: models, maxPeople: maxPeople, threads: threads,
                                        minConfidence: 0.6, smooth: 1)
        live.maxFrames = frames
        let copies = copies
        if copies > 1 { live.capturedFrame = { tile($0, copies: copies) } }
        var predictions = 0
        let stats = try live.run(input: input) { event in
            if case .prediction = event { predictions += 1 }
        }
        let lat = stats.latencies.sorted()
        var line = JSONLine()
        line.add("fps", round3(stats.fps))
        line.add("dropped_frames", stats.dropped)
        line.add("latency_ms_median", round3(percentile(lat, 0.5)))
        line.add("latency_ms_p95", round3(percentile(lat, 0.95)))
        line.add("frames", stats.frames)
        line.add("predictions", predictions)
        line.add("persons_per_frame", round3(Double(stats.persons) / Double(max(stats.frames, 1))))
        line.add("seconds", round3(stats.seconds))
        print(line.text)
    }
}
