/// The error poseact shows a user: one line that names the file, the row or the value, says
/// what is wrong and, where it can, what to do. Every part of poseact throws this one type;
/// `Source` (an empty enum per part, e.g. `OneLineError<StoreFailure>`, spelled `StoreError`)
/// only keeps the parts apart where a caller catches one of them: a video that cannot be
/// read skips its clip, while a damaged store stops the run.
public struct OneLineError<Source>: Error, CustomStringConvertible, Equatable, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
