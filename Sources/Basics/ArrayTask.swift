import Foundation

/// One task's share of work split over `count` tasks: task `index` (0-based) takes the items
/// whose position ≡ index (mod count). Given as `i/n`, or as `auto` (`auto/n`) to be read
/// from the variables a scheduler sets in each task of an array job:
///
/// - Slurm job arrays: `SLURM_ARRAY_TASK_ID`, with `SLURM_ARRAY_TASK_MIN`, `_STEP` and
///   `_COUNT` (or `_MAX`): `--array=0-7`, `--array=1-8` and `--array=0-14:2` are all 8 tasks.
/// - Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX`; the Job's `completions` is not in
///   the environment, so the count is given: `auto/8`.
/// - GNU parallel: `PARALLEL_SEQ` (1-based); the count is given: `auto/8`.
///
/// A retried task gets the same variables again, so it redoes its own share and no other.
public struct ArrayTask: Equatable, Sendable, CustomStringConvertible {
    public var index: Int, count: Int
    /// Where the index came from: "" for `i/n`, else the variables read ("SLURM_ARRAY_TASK_ID=3").
    public var origin: String

    public init(index: Int, count: Int, origin: String = "") { self.index = index; self.count = count; self.origin = origin }

    /// The whole work in one task: 0/1.
    public static let whole = ArrayTask(index: 0, count: 1)

    public var description: String { "\(index)/\(count)" + (origin.isEmpty ? "" : " (\(origin))") }

    /// Whether the item at `position` is this task's.
    public func owns(_ position: Int) -> Bool { position % count == index }

    /// The items of this task's share, in their order.
    public func share<T>(_ items: [T]) -> [T] { items.enumerated().filter { owns($0.offset) }.map(\.element) }

    /// Whether `text` is `i/n`, `auto` or `auto/n`.
    public static func isWellFormed(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count) else { return false }
        if parts[0] == "auto" { return parts.count == 1 || (Int(parts[1]).map { $0 >= 1 } ?? false) }
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]) else { return false }
        return n >= 1 && (0..<n).contains(i)
    }

    /// The largest task number or count the variables may give: far beyond any scheduler's
    /// array (Slurm allows 4 million), and small enough that no arithmetic on it overflows.
    public static let maxNumber = 100_000_000

    /// Resolves `i/n`, `auto` or `auto/n` (checked by `isWellFormed`) against `environment`;
    /// a missing or inconsistent variable is one line saying what to do. `flag` names the
    /// option in messages.
    public static func resolve(_ text: String, flag: String, environment: [String: String]) throws -> ArrayTask {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard isWellFormed(text) else {
            throw ArrayTaskError("\(flag) \(text): give i/n (task i of n, from 0), auto, or auto/n")
        }
        if parts[0] != "auto" { return ArrayTask(index: Int(parts[0])!, count: Int(parts[1])!) }
        let given = parts.count == 2 ? Int(parts[1]) : nil
        func number(_ name: String) throws -> Int? {
            guard let value = environment[name] else { return nil }
            guard let n = Int(value.trimmingCharacters(in: .whitespaces)), (0...maxNumber).contains(n) else {
                throw ArrayTaskError("\(flag) auto: \(name)=\(OneLine.excerpt(value)) is not a whole number in 0…\(maxNumber)")
            }
            return n
        }
        if let id = try number("SLURM_ARRAY_TASK_ID") {
            let min = try number("SLURM_ARRAY_TASK_MIN") ?? 0
            let step = max(try number("SLURM_ARRAY_TASK_STEP") ?? 1, 1)
            let max_ = try number("SLURM_ARRAY_TASK_MAX")
            let origin = "SLURM_ARRAY_TASK_ID=\(id)"
            guard let count = try number("SLURM_ARRAY_TASK_COUNT") ?? max_.map({ ($0 - min) / step + 1 }) else {
                throw ArrayTaskError("\(flag) auto: SLURM_ARRAY_TASK_ID=\(id) but neither SLURM_ARRAY_TASK_COUNT nor _MAX is set: give \(flag) auto/N")
            }
            guard id >= min, (id - min) % step == 0, (id - min) / step < count else {
                throw ArrayTaskError("\(flag) auto: the array's task ids are not evenly spaced (SLURM_ARRAY_TASK_ID=\(id), MIN=\(min), STEP=\(step), COUNT=\(count)): "
                    + "submit with --array=0-\(count - 1) (or a:b:step), or give \(flag) i/n")
            }
            if let given, given != count {
                throw ArrayTaskError("\(flag) auto/\(given): the Slurm array has \(count) tasks (SLURM_ARRAY_TASK_COUNT): make them agree")
            }
            return ArrayTask(index: (id - min) / step, count: count, origin: origin)
        }
        for (name, base, what) in [("JOB_COMPLETION_INDEX", 0, "a Kubernetes Indexed Job's completions"),
                                   ("PARALLEL_SEQ", 1, "the number of inputs given to GNU parallel")] {
            guard let value = try number(name) else { continue }
            guard let count = given else {
                throw ArrayTaskError("\(flag) auto: \(name)=\(value) says which task this is, not how many there are: give \(flag) auto/N with N \(what)")
            }
            guard value >= base else {
                throw ArrayTaskError("\(flag) auto/\(count): \(name)=\(value), but it counts from \(base)")
            }
            guard value - base < count else {
                throw ArrayTaskError("\(flag) auto/\(count): \(name)=\(value) is past the last of \(count) tasks: give N = \(what)")
            }
            return ArrayTask(index: value - base, count: count, origin: "\(name)=\(value)")
        }
        throw ArrayTaskError("\(flag) \(text): no array task in the environment (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or PARALLEL_SEQ): "
            + "run it as a task of an array job, or give \(flag) i/n")
    }
}

public enum ArrayTaskFailure {}
public typealias ArrayTaskError = OneLineError<ArrayTaskFailure>
