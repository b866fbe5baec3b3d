/// Expands a TFLite sparse tensor (TACO-style `SparsityParameters`) into a dense array.
///
/// `values` are the stored non-zero values in traversal order. Each dimension of the
/// traversal is either DENSE (all `dense_size` coordinates present) or SPARSE_CSR
/// (`segments[p] ..< segments[p+1]` index into `indices`, which give the coordinates, for
/// position p of the enclosing dimension). Block sparsity (`block_map`) is not used by
/// the BlazePose models and is rejected.
func densify<T>(values: [T], shape: [Int], sparsity: Sparsity, zero: T, what: String) throws -> [T] {
    let rank = shape.count
    let order = sparsity.traversalOrder.map(Int.init)
    guard sparsity.blockMap.isEmpty else { throw TFLiteError("\(what): block-sparse tensors are not supported") }
    guard order.count == rank, Set(order) == Set(0..<rank), sparsity.dimMetadata.count == rank else {
        throw TFLiteError("\(what): sparsity traversal order \(order) does not fit shape \(shape)")
    }
    var strides = [Int](repeating: 1, count: rank)
    for d in stride(from: rank - 2, through: 0, by: -1) { strides[d] = strides[d + 1] * shape[d + 1] }
    let total = shape.reduce(1, *)
    var dense = [T](repeating: zero, count: total)
    var consumed = 0

    // Depth-first walk of the traversal dimensions; `position` is the index of the current
    // element of the previous level, as CSR segments are per enclosing element.
    func visit(level: Int, position: Int, offset: Int) throws {
        if level == rank {
            guard consumed < values.count else { throw TFLiteError("\(what): sparse tensor has fewer values than its indices") }
            dense[offset] = values[consumed]; consumed += 1
            return
        }
        let meta = sparsity.dimMetadata[level]
        let dim = order[level]
        switch meta.format {
        case .dense:
            let size = Int(meta.denseSize)
            guard size == shape[dim] else { throw TFLiteError("\(what): dense size \(size) of dimension \(dim) is not \(shape[dim])") }
            for i in 0..<size { try visit(level: level + 1, position: position * size + i, offset: offset + i * strides[dim]) }
        case .sparseCSR:
            guard position + 1 < meta.segments.count else { throw TFLiteError("\(what): CSR segments too short") }
            let lo = Int(meta.segments[position]), hi = Int(meta.segments[position + 1])
            guard lo >= 0, lo <= hi, hi <= meta.indices.count else { throw TFLiteError("\(what): CSR segment \(lo)..<\(hi) out of range") }
            for p in lo..<hi {
                let coordinate = Int(meta.indices[p])
                guard coordinate >= 0, coordinate < shape[dim] else { throw TFLiteError("\(what): CSR index \(coordinate) out of range") }
                try visit(level: level + 1, position: p, offset: offset + coordinate * strides[dim])
            }
        }
    }
    try visit(level: 0, position: 0, offset: 0)
    guard consumed == values.count else { throw TFLiteError("\(what): sparse tensor has \(values.count) values but its indices use \(consumed)") }
    return dense
}
