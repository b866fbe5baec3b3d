import Foundation
import Keypoints
import Tensor

/// A change made through libhdf5 itself: a dataset given another shape or values, or an
/// attribute another value. The file stays well-formed HDF5 and gets a valid checksum
/// when closed: what another tool, or someone rewriting the file, can produce, and so the
/// reader's own checks, not the checksum, must catch it.
public enum HDF5Rewrite {
    enum Target {
        case dataset(group: String, name: String)
        case attribute(group: String, dataset: String?, name: String)
    }

    /// Every dataset and attribute below `group`; `path` is the group's, ending in "/".
    static func targets(_ group: HDF5Group, _ path: String) throws -> [Target] {
        var out = try group.attributeNames().map { Target.attribute(group: path, dataset: nil, name: $0) }
        for name in try group.children() {
            switch try group.kind(of: name) {
            case .group:
                let g = try group.group(name)
                out += try targets(g, path + name + "/")
                g.close()
            default:
                out.append(.dataset(group: path, name: name))
                let d = try group.dataset(name)
                out += try d.attributeNames().map { Target.attribute(group: path, dataset: name, name: $0) }
                d.close()
            }
        }
        return out
    }

    /// One random change to the file at `path`, written back through libhdf5.
    public static func damage(_ path: String, rng: inout SplitMix64) throws -> String {
        let file = try HDF5File.open(path, writable: true)
        defer { try? file.close() }
        let root = try file.root()
        let all = try targets(root, "/")
        guard !all.isEmpty else { return "nothing to change" }
        let target = all[rng.below(all.count)]
        let groupPath: String, name: String, datasetName: String?
        switch target {
        case .dataset(let g, let n): (groupPath, name, datasetName) = (g, n, nil)
        case .attribute(let g, let d, let n): (groupPath, name, datasetName) = (g, n, d)
        }
        let group = groupPath == "/" ? root : try file.group(groupPath)
        if case .dataset = target {
            try group.remove(name)
            let dims = [0, 1, 2, 3, 5, 17, 33, 200]
            let shape = (0..<(1 + rng.below(3))).map { _ in rng.pick(dims) }
            let count = shape.reduce(1, *)
            let special: [Float] = [.nan, .infinity, -.infinity, 1e38, -1e38, 0, -1]
            let values = (0..<count).map { _ in rng.below(4) == 0 ? rng.pick(special) : Float(rng.gaussian()) }
            try group.write(name, values, shape: shape).close()
            return "dataset \(groupPath)\(name) → shape \(shape)"
        }
        let owner: HDF5Object = try datasetName.map { try group.dataset($0) } ?? group
        let ints = [-1, 0, 1, 2, 7, 4096, 1 << 31, Int.max]
        let texts = ["", "{", "[]", "null", "nan", "{\"a\":1}", String(repeating: "x", count: 3000), "0", "-5", "1e309"]
        switch rng.below(3) {
        case 0: let v = rng.pick(ints); try owner.setAttribute(name, v); return "attribute \(groupPath)\(datasetName ?? "") \(name) = \(v)"
        case 1: let v = rng.pick([Double.nan, .infinity, -1, 0, 1e300]); try owner.setAttribute(name, v); return "attribute \(groupPath)\(datasetName ?? "") \(name) = \(v)"
        default:
            // A string: a whole other one, or the stored text cut or with one character changed.
            var v = rng.pick(texts)
            if case .string(let old)? = try? owner.attribute(name), !old.isEmpty, rng.below(2) == 0 {
                var chars = Array(old)
                let i = rng.below(chars.count)
                if rng.below(2) == 0 { chars = Array(chars[..<i]) } else { chars[i] = rng.pick(Array("0123456789-e.,:{}[]\"a")) }
                v = String(chars)
            }
            try owner.setAttribute(name, v)
            return "attribute \(groupPath)\(datasetName ?? "") \(name) = \(v.prefix(40))"
        }
    }
}
