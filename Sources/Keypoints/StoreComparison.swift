import Foundation

/// Whether two keypoint stores hold the same clips, bit for bit: the stores of one dataset
/// extracted by one machine and by the tasks of an array job then merged, or extracted again
/// from a cache. What each clip came from (`source`) and the store's own attributes may
/// differ; ids, labels, splits, ranges, frame sizes, joints, times, keypoints, world
/// landmarks, the estimator and the model hash may not. NaN (a frame without a person)
/// equals NaN.
public enum StoreComparison {
    /// The differences, one line each, at most `limit`; empty when the stores are the same.
    public static func differences(_ a: KeypointStore, _ b: KeypointStore, limit: Int = 10) throws -> [String] {
        var found: [String] = []
        func note(_ line: String) { if found.count < limit { found.append(line) } }
        let idsA = Set(a.entries.map(\.id)), idsB = Set(b.entries.map(\.id))
        for id in idsA.subtracting(idsB).sorted() { note("\(id): only in \(a.path)") }
        for id in idsB.subtracting(idsA).sorted() { note("\(id): only in \(b.path)") }
        for id in idsA.intersection(idsB).sorted() {
            guard found.count < limit else { break }
            let x = try a.read(id), y = try b.read(id)
            var fields: [String] = []
            if x.label != y.label { fields.append("label \(x.label) ≠ \(y.label)") }
            if x.split != y.split { fields.append("split") }
            if !same(x.start, y.start) || !same(x.end, y.end) { fields.append("range") }
            if x.fps.bitPattern != y.fps.bitPattern || x.width != y.width || x.height != y.height { fields.append("fps or frame size") }
            if x.jointNames != y.jointNames { fields.append("joints") }
            if !same(x.times, y.times) { fields.append("times (\(x.times.count) and \(y.times.count) frames)") }
            if !same(x.keypoints, y.keypoints) { fields.append("keypoints") }
            if !same(x.world ?? [], y.world ?? []) || (x.world == nil) != (y.world == nil) { fields.append("world landmarks") }
            if x.estimator != y.estimator || x.modelHash != y.modelHash { fields.append("estimator or models") }
            if !fields.isEmpty { note("\(id): \(fields.joined(separator: ", ")) differ") }
        }
        return found
    }

    static func same(_ x: Double?, _ y: Double?) -> Bool { x?.bitPattern == y?.bitPattern }
    static func same(_ x: [Double], _ y: [Double]) -> Bool { x.count == y.count && zip(x, y).allSatisfy { $0.bitPattern == $1.bitPattern } }
    static func same(_ x: [Float], _ y: [Float]) -> Bool {
        x.count == y.count && zip(x, y).allSatisfy { $0.bitPattern == $1.bitPattern || ($0.isNaN && $1.isNaN) }
    }
}
