import ArgumentParser
import Basics
import Classifier
import Foundation
import Keypoints
import TFLite

// Flag values that are more than a number or a path, parsed (and refused) by
// swift-argument-parser before any command runs.

/// `--shard i/n` and `--task i/n`: every n-th item from the i-th (0-based); or `auto`
/// (`auto/n`), read from the array job's variables (Slurm, Kubernetes, GNU parallel) when
/// the command is checked: see `ArrayTask`.
struct TaskArgument: ExpressibleByArgument {
    var text: String

    init(_ text: String) { self.text = text }

    init?(argument: String) {
        guard ArrayTask.isWellFormed(argument) else { return nil }
        text = argument
    }

    var defaultValueDescription: String { text }

    /// The task this process is: `flag` names the option in a message.
    func resolved(flag: String) throws -> ArrayTask {
        do { return try ArrayTask.resolve(text, flag: flag, environment: ProcessInfo.processInfo.environment) }
        catch let error as ArrayTaskError { throw ValidationError(error.message) }
    }
}

/// `--fold i/k`: cross-validation fold i (1-based) of k.
struct Fold: ExpressibleByArgument {
    var index: Int, count: Int

    init?(argument: String) {
        let parts = argument.split(separator: "/", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 2, let i = parts[0], let k = parts[1], k >= 2, (1...k).contains(i) else { return nil }
        index = i; count = k
    }
}

/// `--streams joint,bone,joint_motion,bone_motion`, or `none`.
struct StreamList: ExpressibleByArgument {
    var streams: [Classifier.Stream]

    init?(argument: String) {
        guard argument != "none" else { streams = []; return }
        let parts = argument.split(separator: ",").map { Classifier.Stream(rawValue: $0.trimmingCharacters(in: .whitespaces)) }
        guard !parts.isEmpty, parts.allSatisfy({ $0 != nil }) else { return nil }
        streams = parts.map { $0! }
    }
}

/// `--seeds 1,2,3`: whole numbers ≥ 0, comma-separated, at least one.
struct SeedList: ExpressibleByArgument {
    var seeds: [Int]

    init(_ seeds: [Int]) { self.seeds = seeds }

    init?(argument: String) {
        let parts = argument.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !parts.isEmpty, parts.allSatisfy({ ($0 ?? -1) >= 0 }) else { return nil }
        seeds = parts.map { $0! }
    }

    var defaultValueDescription: String { seeds.map(String.init).joined(separator: ",") }
}

/// `--joints`: a joint layout by name.
enum JointLayout: String, CaseIterable, ExpressibleByArgument {
    /// Apple's 18 (Create ML's action classifier).
    case vision
    /// BlazePose's 33.
    case blazepose
    /// BlazePose's 33 plus head, neck and root.
    case all

    var names: [String] {
        switch self {
        case .vision: return Skeleton.visionLayout
        case .blazepose: return Skeleton.blazePoseNames
        case .all: return Skeleton.allNames
        }
    }
}

extension ConvolutionKernels: ExpressibleByArgument {}
