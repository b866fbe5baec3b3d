import Keypoints

/// The graph an ST-GCN convolves over, made from the model's joint layout (any layout:
/// Vision's 18, BlazePose's 33, Penn Action's 13, an imported one), with ST-GCN's
/// spatial-configuration partition into K = 3 subsets:
///
/// - k = 0, the joint itself;
/// - k = 1, its neighbour nearer the centre (its parent);
/// - k = 2, its neighbours farther from the centre (its children), averaged.
///
/// The edges are `Skeleton.parentPositions` (the `bone` feature's parents). The centre is
/// `root` when the layout has it, else `neck`, else the first joint without a parent; every
/// other joint without a parent (Vision's hips, whose `root` is not in the layout; a name
/// poseact does not know) hangs from the centre, so the graph is one tree and every joint
/// can reach every other.
///
/// `matrices` is (K, V, V), [k][w][v]: output joint w reads input joint v with that
/// weight. It is PYSKL's spatial partition after `normalize_digraph`, transposed (PYSKL's
/// A[k][v][w] is this [k][w][v]).
public struct SkeletonGraph: Equatable, Sendable {
    public static let partitions = 3
    public let joints: Int
    /// Each joint's parent in the tree; nil for the centre.
    public let parents: [Int?]
    public let centre: Int
    /// (K, V, V) row-major.
    public let matrices: [Float]

    public init(layout: [String]) {
        precondition(!layout.isEmpty)
        var parents = Skeleton.parentPositions(of: layout)
        let V = layout.count
        let names = layout.map(Skeleton.canonicalName)
        let centre = names.firstIndex(of: "root") ?? names.firstIndex(of: "neck")
            ?? parents.firstIndex { $0 == nil } ?? 0
        for j in 0..<V where j != centre && parents[j] == nil { parents[j] = centre }
        parents[centre] = nil
        self.joints = V; self.parents = parents; self.centre = centre
        var m = [Float](repeating: 0, count: Self.partitions * V * V)
        var children = [[Int]](repeating: [], count: V)
        for (j, p) in parents.enumerated() { if let p { children[p].append(j) } }
        for w in 0..<V {
            m[w * V + w] = 1
            if let p = parents[w] { m[(V + w) * V + p] = 1 }
            for c in children[w] { m[(2 * V + w) * V + c] = 1 / Float(children[w].count) }
        }
        matrices = m
    }
}
