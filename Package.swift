// swift-tools-version:6.0
// poseact: train human-action classifiers from labeled videos and run them live, on Linux.
import PackageDescription

// Every Swift target that reads a byte of a file is built with Swift's checks on (bounds,
// overflow, preconditions: `-O`, never `-Ounchecked`), so a hostile file traps or throws
// instead of reading or writing at a wild address. These targets are always optimised (a
// debug build of their loops would make the test suite minutes slower and check nothing
// the tests don't), for the baseline of the architecture (SSE2 on x86-64, NEON on ARM64),
// so one binary runs on any CPU: the pose engine's hot loops are C (CPUKernels), built
// for AVX-512, AVX2 and the baseline and chosen at run time, and training's convolutions
// run on the same kernels (PanelGemm); OpenBLAS, which chooses its own, keeps the dense
// layers and the graph layers' joint mixing. What the checks cost is in docs/experiments.md.
let optimisedSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v5),
    .unsafeFlags(["-O"]),
]
let cliSettings: [SwiftSetting] = [.swiftLanguageMode(.v5)]
let commonSettings: [SwiftSetting] = [.swiftLanguageMode(.v5)]
// A web page's files (Resources/NAME.html, .css, .js; see PageTemplate), compiled into
// the target as byte arrays (`PackageResources.NAME_html`, ...).
func pageResources(_ name: String) -> [Resource] {
    ["html", "css", "js"].map { .embedInCode("Resources/\(name).\($0)") }
}

let package = Package(
    name: "poseact",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "poseact", targets: ["poseact"]),
        .library(name: "TFLite", targets: ["TFLite"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        // The live page's server: HTTP/1.1 and WebSocket on SwiftNIO, with limits on request
        // heads, idle connections, frames and connections (see BrowserView).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // System libraries (Debian -dev packages), found by pkg-config.
        .systemLibrary(name: "CBLAS", path: "Sources/CBLAS", pkgConfig: "openblas",
                       providers: [.apt(["libopenblas-dev"])]),
        .systemLibrary(name: "CLapacke", path: "Sources/CLapacke", pkgConfig: "lapacke",
                       providers: [.apt(["liblapacke-dev"])]),
        .systemLibrary(name: "CHDF5", path: "Sources/CHDF5", pkgConfig: "hdf5",
                       providers: [.apt(["libhdf5-dev"])]),
        .systemLibrary(name: "CFFmpeg", path: "Sources/CFFmpeg",
                       pkgConfig: "libavformat libavcodec libavdevice libswscale libavutil",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavdevice-dev",
                                         "libswscale-dev", "libavutil-dev"])]),
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // ---- The foundation both wings stand on.
        // The error users see (one line), JSON lines, files replaced atomically, the CSV
        // writer, the YAML config machinery and its key spelling, the newest-wins mailbox
        // between two threads (live capture, the classifier worker).
        .target(name: "Basics", swiftSettings: optimisedSettings),
        // Dense float buffers, BLAS wrappers and the two-core parallel-for.
        .target(name: "Tensor", dependencies: ["CBLAS"], swiftSettings: optimisedSettings),
        // The lines the commands print for programs to read (`--json` events and summaries,
        // progress): one type per kind, written by the CLI, read by the studio and the tests.
        .target(name: "OutputLines", dependencies: ["Basics", "Evaluation"], swiftSettings: commonSettings),
        // The training config's machinery: a key declared once (name, default, bound, YAML
        // and JSON), a config file read strictly over its bases, each error one line.
        .target(name: "Config", dependencies: ["Basics", .product(name: "Yams", package: "Yams")], swiftSettings: optimisedSettings),
        // Xlib's functions, loaded at run time only for `live --window` (libx11-dev's headers at
        // build time, nothing linked): a headless machine needs no X11 library.
        .target(name: "CX11"),
        // RGB pictures: drawing, text, PNG (zlib); no codec library.
        .target(name: "Images", dependencies: ["Basics", "CZlib"], swiftSettings: optimisedSettings),

        // ---- Wing 1, video → poses.
        // The engine's hot loops in C, one copy per instruction set (AVX-512, AVX2, portable;
        // bfloat16 products on AVX-512 and on ARM64), chosen at run time; always optimised, as
        // the Swift kernels are.
        .target(name: "CPUKernels", cSettings: [.unsafeFlags(["-O3"])]),
        // .tflite reader, execution plan and CPU kernels.
        // The C kernels' matrix products, for the engine and training alike: which
        // instruction set (POSEACT_KERNELS), the one packing of op(B), the threaded products.
        .target(name: "MatrixProduct", dependencies: ["Basics", "CPUKernels", "Tensor"], swiftSettings: optimisedSettings),
        .target(name: "TFLite", dependencies: ["Basics", "CPUKernels", "MatrixProduct", "Tensor"], swiftSettings: optimisedSettings),
        // Video and image input/output on FFmpeg: files, cameras, streams, JPEG, shot changes.
        .target(name: "Media", dependencies: ["Basics", "CFFmpeg", "Images"], swiftSettings: optimisedSettings),
        // The BlazePose pipeline: detection, ROI, landmarks, tracking, smoothing.
        .target(name: "Pose", dependencies: ["Basics", "Images", "Media", "MatrixProduct", "Tensor", "TFLite"], swiftSettings: optimisedSettings),
        // Trajectories of thrown objects, with no model: moving blobs against a learnt
        // background, linked over frames, fitted with ballistic paths; the camera's own motion.
        .target(name: "Trajectories", dependencies: ["Images"], swiftSettings: optimisedSettings),
        // Rendered test scenes with exact truth: a figure that throws, balls on ballistic
        // paths, distractors, a shaking camera (`poseact throws render`).
        .target(name: "Scenes", dependencies: ["Basics", "Images", "Media", "Tensor"], swiftSettings: optimisedSettings),

        // ---- Wing 2, keypoints → model.
        // The joint vocabulary, the HDF5 keypoint store, the keypoint formats and imports,
        // annotation files.
        .target(name: "Keypoints", dependencies: ["Basics", "CHDF5"], swiftSettings: optimisedSettings),
        // Keypoints into model input: the preprocessing spec and its windows, augmentation,
        // temporal filters and their quality, the windows file.
        .target(name: "KeypointWindows", dependencies: ["Basics", "Config", "Keypoints", "Tensor"], swiftSettings: optimisedSettings),
        // Metrics (accuracy, per-class precision/recall/F1, confusion), reports and plots.
        // The report's page is a resource (HTML, CSS, JavaScript) embedded in the code, as
        // the live page's is: the binary needs no resource bundle beside it.
        .target(name: "Evaluation", dependencies: ["Basics", "Images"], resources: pageResources("report"),
                swiftSettings: commonSettings),
        // Layers with explicit forward/backward (their GEMMs on the engine's C kernels,
        // `PanelGemm`), models, losses, optimisers, the training loop, its YAML config and
        // the weights file.
        .target(name: "Classifier", dependencies: ["Basics", "Config", "Evaluation", "Images", "Keypoints", "KeypointWindows", "MatrixProduct", "Tensor",
                                                   .product(name: "Yams", package: "Yams")],
                swiftSettings: optimisedSettings),

        // ---- Where the wings meet.
        // The one bridge from poses into the store: videos → keypoint clips.
        .target(name: "Extraction", dependencies: ["Basics", "Keypoints", "Media", "Pose"],
                swiftSettings: optimisedSettings),
        // What a coach measures beyond the label: repetitions, occurrences, joint angles.
        .target(name: "Movement", swiftSettings: optimisedSettings),
        // The real-time pipeline and its offline twin (annotate): poses → window → model →
        // states, overlays, timelines, summaries.
        .target(name: "Live", dependencies: ["Basics", "Classifier", "Evaluation", "Extraction", "Images", "Keypoints", "KeypointWindows", "Media", "Movement", "Pose", "Trajectories"],
                swiftSettings: commonSettings),
        // Where a person watches a live run: the browser page (Hummingbird HTTP + WebSocket,
        // JPEG frames) and the native window (Xlib).
        // Scores --trajectories on rendered scenes against their truth.
        .target(name: "ThrowEvaluation", dependencies: ["Basics", "Live", "Media", "Scenes", "Trajectories"], swiftSettings: optimisedSettings),
        // A page for one user on a small HTTP server (Hummingbird on SwiftNIO): exact Host and
        // Origin, a token beyond loopback, limits on request heads, bodies, idle connections,
        // WebSocket frames and connections. The live page and the studio are served by it.
        .target(name: "PageServing", dependencies: ["Basics",
                                                    .product(name: "Hummingbird", package: "hummingbird"),
                                                    .product(name: "HummingbirdCore", package: "hummingbird"),
                                                    .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                                                    .product(name: "NIOCore", package: "swift-nio"),
                                                    .product(name: "NIOHTTP1", package: "swift-nio"),
                                                    .product(name: "NIOPosix", package: "swift-nio"),
                                                    .product(name: "NIOWebSocket", package: "swift-nio"),
                                                    .product(name: "Logging", package: "swift-log"),
                                                    .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
                swiftSettings: commonSettings),
        .target(name: "LiveView", dependencies: ["Basics", "CX11", "Images", "Live", "Media", "PageServing",
                                                 .product(name: "Hummingbird", package: "hummingbird"),
                                                 .product(name: "NIOCore", package: "swift-nio")],
                resources: pageResources("live"), swiftSettings: commonSettings),

        // `poseact studio`: the page over a project folder that runs poseact's commands for a
        // user (Data, Label, Train, Evaluate, Preview), each as the command line it shows.
        .target(name: "Studio", dependencies: ["Basics", "Keypoints", "OutputLines", "PageServing",
                                               .product(name: "Hummingbird", package: "hummingbird"),
                                               .product(name: "NIOCore", package: "swift-nio")],
                resources: pageResources("studio"), swiftSettings: commonSettings),

        // Fuzzing of every reader of files from strangers: the mutations, the readers as the
        // commands run them, and the seeds; `poseact-fuzz` runs them, built with
        // AddressSanitizer by notebooks-free-scripts/fuzz.sh.
        .target(name: "ReaderFuzzing", dependencies: ["Basics", "Classifier", "Extraction", "Keypoints", "KeypointWindows", "OutputLines", "Scenes", "Tensor", "TFLite"], swiftSettings: commonSettings),
        .executableTarget(name: "poseact-fuzz", dependencies: ["ReaderFuzzing",
                                                               .product(name: "ArgumentParser", package: "swift-argument-parser")],
                          swiftSettings: cliSettings),

        // The command line: one command a file, validation before work, no work of its own.
        .executableTarget(
            name: "poseact",
            dependencies: [
                "Basics", "Classifier", "Evaluation", "Extraction", "Images", "Keypoints", "KeypointWindows", "Live", "LiveView",
                "MatrixProduct", "Media", "Movement", "OutputLines", "PageServing", "Pose", "Studio", "Scenes", "Tensor", "TFLite", "ThrowEvaluation", "Trajectories",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: cliSettings),

        // Where the tests find the shared folder and the pose models (one lookup for every test target).
        .target(name: "TestData", path: "Tests/TestData", swiftSettings: commonSettings),
        // A hand-made BlazePose person, for the tests of what draws and smooths poses.
        // A slice of Penn Action and a small, quick training config, for the tests that train.
        .target(name: "TrainingFixtures", dependencies: ["Classifier", "Keypoints", "KeypointWindows", "TestData"], path: "Tests/TrainingFixtures",
                swiftSettings: commonSettings),
        .target(name: "PoseFixtures", dependencies: ["Pose"], path: "Tests/PoseFixtures", swiftSettings: commonSettings),
        .testTarget(name: "BasicsTests", dependencies: ["Basics"], swiftSettings: commonSettings),
        .testTarget(name: "OutputLinesTests", dependencies: ["Basics", "Evaluation", "OutputLines"], swiftSettings: commonSettings),
        .testTarget(name: "TensorTests", dependencies: ["Tensor"], swiftSettings: commonSettings),
        .testTarget(name: "MatrixProductTests", dependencies: ["MatrixProduct", "Tensor"], swiftSettings: commonSettings),
        .testTarget(name: "TFLiteTests", dependencies: ["TestData", "MatrixProduct", "TFLite", "Tensor"], swiftSettings: commonSettings),
        .testTarget(name: "ImagesTests", dependencies: ["CZlib", "Images"], swiftSettings: commonSettings),
        .testTarget(name: "MediaTests", dependencies: ["TestData", "Basics", "Images", "Media"], swiftSettings: commonSettings),
        .testTarget(name: "PoseTests", dependencies: ["TestData", "Basics", "Images", "MatrixProduct", "Media", "Pose", "PoseFixtures", "TFLite", "Tensor"], swiftSettings: commonSettings),
        .testTarget(name: "KeypointsTests", dependencies: ["TestData", "Basics", "CHDF5", "Keypoints", "KeypointWindows", "Tensor"],
                    exclude: ["Samples"], swiftSettings: commonSettings),
        .testTarget(name: "ExtractionTests", dependencies: ["Extraction"], swiftSettings: commonSettings),
        .testTarget(name: "EvaluationTests", dependencies: ["TestData", "Basics", "Evaluation", "Images"], swiftSettings: commonSettings),
        .testTarget(name: "ClassifierTests", dependencies: ["TestData", "Basics", "Classifier", "Config", "Evaluation", "Keypoints", "KeypointWindows", "Tensor", "TrainingFixtures"],
                    swiftSettings: commonSettings),
        .testTarget(name: "ReaderFuzzingTests", dependencies: ["TestData", "Classifier", "Keypoints", "ReaderFuzzing", "Tensor", "TrainingFixtures"],
                    swiftSettings: commonSettings),
        .testTarget(name: "ScenesTests", dependencies: ["Images", "Scenes", "Tensor"], swiftSettings: commonSettings),
        .testTarget(name: "TrajectoriesTests", dependencies: ["Images", "Trajectories"], swiftSettings: commonSettings),
        .testTarget(name: "ThrowEvaluationTests", dependencies: ["Scenes", "ThrowEvaluation", "Trajectories"], swiftSettings: commonSettings),
        .testTarget(name: "MovementTests", dependencies: ["Movement", "Tensor"], swiftSettings: commonSettings),
        .testTarget(name: "LiveTests", dependencies: ["TestData", "Classifier", "Extraction", "Images", "Keypoints", "KeypointWindows", "Live", "Media", "Movement", "Pose", "PoseFixtures", "Trajectories"],
                    swiftSettings: commonSettings),
        .testTarget(name: "LiveViewTests", dependencies: ["TestData", "Basics", "Images", "Keypoints", "Live", "LiveView", "Media", "OutputLines", "PageServing", "Studio"], swiftSettings: commonSettings),
        .testTarget(name: "PoseactCLITests", dependencies: ["TestData", "TrainingFixtures", "poseact", "Images", "Keypoints", "KeypointWindows", "MatrixProduct", "Media", "Movement", "OutputLines", "Scenes", "Tensor", "TFLite"],
                    swiftSettings: commonSettings),
        .testTarget(name: "PackageLayoutTests", dependencies: ["TestData"], swiftSettings: commonSettings),
        .testTarget(name: "SystemLibrariesTests", dependencies: ["CBLAS", "CFFmpeg", "CHDF5", "CLapacke"],
                    swiftSettings: commonSettings),
    ]
)
