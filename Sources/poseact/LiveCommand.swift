import ArgumentParser
import Basics
import Foundation
import Live
import LiveView
import Media
import OutputLines
import PageServing

struct LiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live",
        abstract: "Run a trained model in real time on a camera, a stream or a file.",
        discussion: """
            The model file supplies the frame rate, window, stride, joints and normalisation; \
            the frames go through the same preprocessing as training. Capture, pose and \
            classification run concurrently: the newest frame is processed, late frames are \
            dropped and counted, never queued. A prediction comes every `stride` frames on a \
            person's last window: "no person" when fewer than 60 % of its frames hold \
            a pose, "low confidence" under --min-confidence, else the action and its \
            probability. Every tracked person is classified with a window of their own \
            (--people all, up to --max-people; --people prominent: the largest only), and \
            keeps the tracker's id while tracked (one unseen for more than 5 frames, who \
            comes back, gets a new id). Each person's predictions make occurrences (a label \
            from --enter to under --exit, a change lasting --min-duration; a \
            --background-label is none); their repetitions are counted from the poses \
            alone, with no training; --angles measures joint angles on every frame and over \
            every repetition (minimum, maximum, value at the turn). A file plays at its own \
            speed, as if live, unless --as-fast-as-possible. --json prints one line per \
            prediction, change of state, occurrence (when it ends), repetition and, with \
            --angles, frame and person; --record writes the video with the overlay. At the \
            end (input over, Ctrl-C) a summary per person: seconds per state, repetitions, \
            occurrences. A stream that stops sending for --timeout \
            seconds ends the run with one line saying so, the summary, and exit status 1.

            --serve PORT serves a page at http://127.0.0.1:PORT/ with the video, the \
            wireframes, each person's action, confidence and repetitions, the fps and the \
            seconds per action, updated live (over a WebSocket; /state.json and /frame.jpg for scripts). \
            --serve-host 0.0.0.0 serves it to the network, to those given the URL printed at \
            start (it holds a token; other requests get 403). Requests from other web pages \
            (another Origin) are refused. --window shows the same overlay \
            in a window on the desktop (q or Esc closes it). When the input ends, the page or \
            the window keeps the last frame and the summary until Ctrl-C (or the window is \
            closed).
            """)

    @OptionGroup var options: LiveOptions
    @OptionGroup(title: "Trajectories and throws") var throwing: TrajectoryArguments
    @Option(help: "A V4L2 camera (default: the first, /dev/video0 usually, when no --input).") var camera: String?
    @Option(help: "A file or a stream URL (rtsp://, http://, udp://).") var input: String?
    @Flag(help: "Read a file as fast as it can be processed, not at its own speed.") var asFastAsPossible = false
    @Option(parsing: .unconditional, help: "Seconds to wait for a stream or camera before giving up.") var timeout = 5.0
    @Option(help: "Write the video with the overlay here (.mp4).") var record: String?
    @Option(help: ArgumentHelp("Serve a live page on this port (0: any free port).", valueName: "port")) var serve: Int?
    @Option(help: ArgumentHelp("The address --serve listens on (0.0.0.0: every network).", valueName: "address"))
    var serveHost = "127.0.0.1"
    @Option(help: ArgumentHelp("A host name the page is also reached by on loopback (e.g. one of /etc/hosts); repeat for several. "
                               + "Without it only 127.x.y.z, [::1] and localhost are accepted.", valueName: "name"))
    var serveName: [String] = []
    @Flag(help: "Show the video with the overlay in a window (needs a desktop: $DISPLAY).") var window = false
    @Flag(help: "Print events as JSON Lines on stdout.") var json = false

    // --json: one line per prediction, one per change of state, and the summary at the end.

    func validate() throws {
        if camera != nil && input != nil { throw ValidationError("--camera and --input are two sources: give one") }
        guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds (got \(timeout))") }
        if let serve, !(0...65535).contains(serve) { throw ValidationError("--serve takes a port 0…65535 (got \(serve))") }
        if !serveName.isEmpty && serve == nil { throw ValidationError("--serve-name is for the page: add --serve PORT") }
        for name in serveName where !PageAccess.isValidName(name) {
            throw ValidationError("--serve-name \(name): not a host name (letters, digits, hyphens and dots, no port) nor an IP address")
        }
        if let record {
            try OutputPaths.check(record, flag: "--record", inputs: [("--model", modelPath(options.model))]
                                  + (input.map { [("--input", $0)] } ?? []) + (camera.map { [("--camera", $0)] } ?? [])
                                  + options.pose.inference.models.inputs)
            do { try VideoWriter.checkName(record) } catch let error as MediaError { throw ValidationError("--record \(error.message)") }
        }
    }

    func run() throws {
        let source = input ?? camera ?? listCameras().first ?? "/dev/video0"   // (absent: says there is no camera)
        // In real time the model runs beside the frames; as fast as possible, in step with them.
        let live = try options.livePipeline(background: !asFastAsPossible)
        live.asFastAsPossible = asFastAsPossible
        live.timeout = timeout
        live.drawOverlay = record != nil || serve != nil || window
        live.throwCoach = throwing.throwCoach(labels: live.coach.classifier.labels, backgroundLabels: options.backgroundLabel)
        // The viewers open before the input, so that a wrong port or a missing display is
        // said at once.
        let name = URL(fileURLWithPath: options.model).deletingPathExtension().deletingPathExtension().lastPathComponent
        let board = LiveBoard(model: name)
        let page = try serve.map { try BrowserView(board: board, host: serveHost, port: $0, names: serveName) }
        if let page { note("live page: \(page.url)") }
        var shown: LiveWindow?
        if window {
            shown = try LiveWindow(title: "poseact live: \(name)", width: 640, height: 480)
        }
        var writer: VideoWriter?
        var recordingFailed: Error?
        let printer = LiveEventPrinter(json: json, angleNames: live.coach.options.angles.map(\.name))
        Interrupt.install(stopping: live)
        let stats = try live.run(input: source) { event in
            if page != nil { board.handle(event) }
            if let shown {
                if case .frame(let image, _) = event { shown.show(image) } else { shown.pollEvents() }
                if shown.closed { live.stop() }
            }
            printer.print(event)
            if case .frame(let image, _) = event, let record, recordingFailed == nil {
                do {
                    if writer == nil {
                        writer = try VideoWriter(path: record, width: image.width, height: image.height, fps: live.coach.spec.fps)
                    }
                    try writer?.write(image)
                } catch {
                    // Once: the frames after it would fail the same way (a full disk).
                    note("warning: \(record): \(error); recording stopped")
                    recordingFailed = error
                }
            }
        }
        if recordingFailed == nil { try writer?.finish() }   // (VideoWriter writes to a temporary file and renames it when finished)
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
        if let recordingFailed, let record {
            // The run went on, but the recording asked for is lost: not a success.
            throw PathError("--record \(record): not written (\(recordingFailed))")
        }
    }

    func printSummary(_ stats: LiveStats) {
        let lat = stats.latencies.sorted(), predictionLat = stats.predictionLatencies.sorted()
        if json {
            print(JSONLines.encode(LiveSummaryLine(frames: stats.frames, droppedFrames: stats.dropped, fps: round3(stats.fps),
                                               latencyMsMedian: round3(percentile(lat, 0.5)), latencyMsP95: round3(percentile(lat, 0.95)),
                                               predictionLatencyMsP95: round3(percentile(predictionLat, 0.95)),
                                               seconds: stats.summary.seconds, people: stats.people.map(PersonLine.init),
                                               trajectories: throwing.trajectories ? stats.trajectories : nil,
                                               trajectoryMsMedian: stats.trajectoryCost.map { round3($0.median) },
                                               trajectoryMsP95: stats.trajectoryCost.map { round3($0.p95) },
                                               trajectoryFramesDropped: throwing.trajectories ? stats.trajectoryFramesDropped : nil,
                                               throwers: throwing.trajectories ? stats.throwTallies.map { ThrowerLine($0, hasTarget: throwing.target != nil) } : nil)))
            return
        }
        print(String(format: "summary: %d frames in %.1f s (%.1f fps), %d dropped; latency median %.0f ms, p95 %.0f ms",
                     stats.frames, stats.seconds, stats.fps, stats.dropped, percentile(lat, 0.5), percentile(lat, 0.95))
              + (predictionLat.isEmpty ? "" : String(format: "; predictions p95 %.0f ms after their window's last frame",
                                                     percentile(predictionLat, 0.95))))
        for person in stats.people { for line in PersonLine(person).lines { print("  " + line) } }
        if throwing.trajectories {
            print("  \(stats.trajectories) trajector\(stats.trajectories == 1 ? "y" : "ies")"
                  + (stats.trajectoryCost.map { String(format: " (detector %.1f ms a frame, median)", $0.median) } ?? ""))
            for t in stats.throwTallies { print("  " + ThrowerLine(t, hasTarget: throwing.target != nil).text) }
        }
    }
}
