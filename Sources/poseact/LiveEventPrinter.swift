import Basics
import Foundation
import Live
import OutputLines

/// What `live` prints of its events as they come, one line each: JSON Lines with `--json`,
/// text without (the overlay, page, window and recording take the events elsewhere).
struct LiveEventPrinter {
    let json: Bool
    /// The angles `--angles` asked for, in its order (angle lines and repetitions name them).
    let angleNames: [String]

    func print(_ event: LiveEvent) {
        switch event {
        case .prediction(let p, let fps, let dropped):
            guard json else { return }
            say(JSONLines.encode(PredictionLine(time: round3(p.time), person: p.personID ?? -1, label: p.state.name,
                                                confidence: Double(p.state.confidence ?? 0), fps: (fps * 10).rounded() / 10,
                                                dropped: dropped)))
        case .stateChange(let from, let to, let time, let person):
            say(json ? JSONLines.encode(StateLine(time: round3(time), person: person ?? -1, from: from ?? "none", to: to))
                     : String(format: "%8.2f s  #%d %@", time, person ?? -1, to))
        case .occurrence(let o):
            say(json ? JSONLines.encode(OccurrenceLine(o)) : String(format: "%8.2f s  ", o.occurrence.end) + OccurrenceLine(o).text)
        case .repetition(let r):
            say(json ? JSONLines.encode(RepetitionLine(r))
                     : String(format: "%8.2f s  ", r.repetition.end) + RepetitionLine(r).text(order: angleNames))
        case .trajectory(let t):
            say(json ? JSONLines.encode(TrajectoryLine(t)) : String(format: "%8.2f s  ", t.end) + TrajectoryLine(t).text)
        case .throwMade(let t):
            say(json ? JSONLines.encode(ThrowLine(t)) : String(format: "%8.2f s  ", t.releaseTime) + ThrowLine(t).text)
        case .scene(let stable, let time):
            if !json { Swift.print(String(format: "%8.2f s  ", time) + (stable ? "the camera stands still" : "the camera moves: no trajectories")) }
        case .angles(let person, let time, let values):
            // (Every frame: left to stdout's buffer, as the frames' pace is the reader's.)
            if json { Swift.print(JSONLines.encode(AnglesLine(person: person, time: time, names: angleNames, values: values))) }
        case .frame, .people:
            break
        }
    }

    /// A line seen at once: stdout may be a pipe to a program that acts on it.
    private func say(_ line: String) {
        Swift.print(line)
        fflush(stdout)
    }
}
