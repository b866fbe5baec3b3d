import ArgumentParser
import Basics

@main
struct Poseact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "poseact",
        abstract: "Train human-action classifiers from labeled videos and run them live, on Linux.",
        discussion: """
            poseact runs Google's BlazePose models with its own TFLite engine on OpenBLAS \
            (no ML runtime). Models are looked up in --models, $POSEACT_MODELS_DIR, ./models, \
            models/ or ../share/poseact/models beside the executable, the models/ folder of the \
            checkout it was built in, then /usr/local/share/poseact/models and \
            /usr/share/poseact/models (the Debian package's); notebooks-free-scripts/setup.sh \
            fetches them into a checkout.
            """,
        version: poseactVersion,
        subcommands: [Demo.self, PoseCommand.self, Extract.self, Import.self, Merge.self, DatasetCommand.self, WindowsCommand.self, Train.self, CrossValidate.self, Enroll.self, Evaluate.self, Export.self, Annotate.self, LiveCommand.self, StudioCommandLine.self, Throws.self, ModelCommand.self, Bench.self]
    )

    static func main() {
        ChildProcess.dieWithParent()
        main(nil)
    }
}
