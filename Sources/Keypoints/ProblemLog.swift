import Foundation

/// Problems, at most `KeypointCSV.problemsListedPerKind` of a kind, then a count of the rest.
struct ProblemLog {
    let file: String
    var problems: [DataProblem] = []
    var counts: [String: Int] = [:]
    var order: [String] = []
    var descriptions: [String: String] = [:]

    init(file: String) { self.file = file }

    mutating func add(_ kind: String, _ row: Int?, _ message: @autoclosure () -> String, summary: String) {
        let n = counts[kind, default: 0]
        if n == 0 { order.append(kind); descriptions[kind] = summary }
        counts[kind] = n + 1
        if n < KeypointCSV.problemsListedPerKind { problems.append(DataProblem(file: file, row: row, message: message())) }
    }

    /// The problems in row order (header first), then the counts of those not listed.
    mutating func finish() -> [DataProblem] {
        problems = problems.enumerated().sorted { ($0.element.row ?? 0, $0.offset) < ($1.element.row ?? 0, $1.offset) }.map(\.element)
        for k in order {
            let n = counts[k]!, extra = n - KeypointCSV.problemsListedPerKind
            if extra > 0 {
                problems.append(DataProblem(file: file, message: "\(extra) more \(descriptions[k]!) not listed (\(n) in all)"))
            }
        }
        return problems
    }
}
