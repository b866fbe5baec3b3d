import ArgumentParser

@main
struct Poseact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "poseact",
        abstract: "Train human-action classifiers from labeled videos and run them live, on Linux.",
        discussion: """
            poseact runs Google's BlazePose models with its own TFLite engine on OpenBLAS \
            (no ML runtime). Models are looked up in --models, $POSEACT_MODELS_DIR, ./models, \
            or the models/ folder of the checkout the binary was built in; \
            notebooks-free-scripts/setup.sh fetches them.
            """,
        subcommands: [Demo.self, PoseCommand.self, Extract.self, Import.self, Merge.self, DatasetCommand.self, WindowsCommand.self, Train.self, CrossValidate.self, Evaluate.self, Export.self, Annotate.self, LiveCommand.self, Throws.self, ModelCommand.self, Bench.self]
    )

    static func main() {
        ChildProcess.dieWithParent()
        main(nil)
    }
}
