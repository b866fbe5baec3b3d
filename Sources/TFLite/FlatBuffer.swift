// A small, bounds-checked reader for FlatBuffers binaries.
//
// Nothing here trusts the file: every offset, vtable, field, vector and string is checked
// against the buffer before it is read, and every failure is a `TFLiteError` that names
// the table and field involved. This module is compiled with -Ounchecked, so no check may
// be left to the standard library: all arithmetic on file values is done in `Int`
// (64-bit) on values that are at most 32 bits wide, so it cannot overflow.
//
// A hostile file can make many offsets point at the same table or vector, turning a small
// file into a huge amount of decoding. The reader therefore charges every table, vector
// and string it hands out against a work budget proportional to the file size; a
// well-formed file (where nothing is shared) never gets close to it.
//
// Layout reminders (little-endian throughout):
// - byte 0: uoffset (u32) to the root table; bytes 4..<8: optional file identifier.
// - table: starts with a soffset (i32); its vtable is at `table - soffset`.
// - vtable: u16 vtable size in bytes, u16 table size in bytes, then one u16 per field
//   slot: the field's offset from the table start, 0 if the field is absent.
// - offset fields (tables, vectors, strings) hold a u32 relative to the field's position.
// - vector / string: u32 element count, then the elements (a string also has a trailing 0).
// - a union field takes two slots: a u8 type (slot n) and an offset to a table (slot n+1).

/// A read-only view of a FlatBuffers binary with a decoding work budget.
public final class FlatBuffer {
    public let bytes: [UInt8]
    /// Work units (roughly: bytes of tables, vectors and strings handed out) allowed.
    public let workLimit: Int
    public private(set) var workDone: Int = 0

    /// - Parameter workLimit: defaults to twice the file size plus 1 MiB.
    public init(bytes: [UInt8], workLimit: Int? = nil) {
        self.bytes = bytes
        self.workLimit = workLimit ?? (2 * bytes.count + (1 << 20))
    }

    public var count: Int { bytes.count }

    // MARK: raw loads (callers check bounds first)

    @inline(__always) func loadU8(_ p: Int) -> UInt8 { bytes[p] }
    @inline(__always) func loadU16(_ p: Int) -> UInt16 {
        UInt16(bytes[p]) | UInt16(bytes[p + 1]) << 8
    }
    @inline(__always) func loadU32(_ p: Int) -> UInt32 {
        UInt32(bytes[p]) | UInt32(bytes[p + 1]) << 8 | UInt32(bytes[p + 2]) << 16 | UInt32(bytes[p + 3]) << 24
    }
    @inline(__always) func loadU64(_ p: Int) -> UInt64 {
        UInt64(loadU32(p)) | UInt64(loadU32(p + 4)) << 32
    }

    // MARK: checks

    /// Throws unless `size` bytes at `position` lie inside the buffer.
    func require(_ position: Int, _ size: Int, _ what: @autoclosure () -> String) throws {
        if position < 0 {
            throw TFLiteError("corrupt file: \(what()) points before the start of the file (offset \(position))")
        }
        if size < 0 || position > count || size > count - position {
            throw TFLiteError("truncated or corrupt file: \(what()) runs past the end (offset \(position + max(size, 0)) of \(count))")
        }
    }

    /// Spends `units` of the work budget.
    func charge(_ units: Int, _ what: @autoclosure () -> String) throws {
        workDone += units
        if workDone > workLimit {
            throw TFLiteError("corrupt file: decoding \(what()) exceeds the work limit of \(workLimit) units for a \(count)-byte file (tables or vectors shared many times?)")
        }
    }

    // MARK: entry points

    /// The 4-byte file identifier at bytes 4..<8, if the buffer is long enough.
    public var fileIdentifier: String? {
        guard count >= 8 else { return nil }
        return String(decoding: bytes[4..<8], as: UTF8.self)
    }

    /// The root table (offset stored in the first 4 bytes).
    public func rootTable(path: String) throws -> Table {
        try require(0, 4, "\(path) root offset")
        let target = Int(loadU32(0))
        return try table(at: target, path: path)
    }

    /// The table whose start (its soffset) is at `position`.
    public func table(at position: Int, path: String) throws -> Table {
        try require(position, 4, "\(path) table")
        let soffset = Int(Int32(bitPattern: loadU32(position)))
        let vtable = position - soffset
        if vtable < 0 || vtable > count - 4 {
            throw TFLiteError("corrupt file: \(path) vtable offset \(soffset) points outside the file (vtable at \(vtable) of \(count))")
        }
        let vtableSize = Int(loadU16(vtable))
        let tableSize = Int(loadU16(vtable + 2))
        if vtableSize < 4 || vtableSize % 2 != 0 {
            throw TFLiteError("corrupt file: \(path) vtable has an invalid size \(vtableSize)")
        }
        try require(vtable, vtableSize, "\(path) vtable")
        if tableSize < 4 {
            throw TFLiteError("corrupt file: \(path) has an invalid table size \(tableSize)")
        }
        try require(position, tableSize, "\(path) table")
        try charge(max(tableSize, 16) + 4, path)
        return Table(buffer: self, position: position, vtable: vtable,
                     vtableSize: vtableSize, tableSize: tableSize, path: path)
    }

    // MARK: Table

    public struct Table {
        public let buffer: FlatBuffer
        /// Byte offset of the table (its soffset) in the buffer.
        public let position: Int
        let vtable: Int
        let vtableSize: Int
        let tableSize: Int
        /// Human-readable location used in error messages, e.g. "subgraph 0 tensor 12".
        public let path: String

        /// Number of field slots the vtable describes.
        public var slotCount: Int { (vtableSize - 4) / 2 }

        /// Absolute position of the field in `slot`, or nil if the field is absent.
        /// Checks that `size` bytes of the field lie inside the table.
        public func fieldPosition(_ slot: Int, size: Int, _ name: String) throws -> Int? {
            guard slot >= 0, slot < slotCount else { return nil }
            let offset = Int(buffer.loadU16(vtable + 4 + 2 * slot))
            if offset == 0 { return nil }
            if offset < 4 || offset > tableSize - size {
                throw TFLiteError("corrupt file: \(path) \(name) (field \(slot)) lies outside its table (field offset \(offset), size \(size), table size \(tableSize))")
            }
            return position + offset
        }

        // Scalars

        public func uint8(_ slot: Int, _ name: String, default def: UInt8 = 0) throws -> UInt8 {
            guard let p = try fieldPosition(slot, size: 1, name) else { return def }
            return buffer.loadU8(p)
        }
        public func int8(_ slot: Int, _ name: String, default def: Int8 = 0) throws -> Int8 {
            guard let p = try fieldPosition(slot, size: 1, name) else { return def }
            return Int8(bitPattern: buffer.loadU8(p))
        }
        public func bool(_ slot: Int, _ name: String, default def: Bool = false) throws -> Bool {
            guard let p = try fieldPosition(slot, size: 1, name) else { return def }
            return buffer.loadU8(p) != 0
        }
        public func uint16(_ slot: Int, _ name: String, default def: UInt16 = 0) throws -> UInt16 {
            guard let p = try fieldPosition(slot, size: 2, name) else { return def }
            return buffer.loadU16(p)
        }
        public func int16(_ slot: Int, _ name: String, default def: Int16 = 0) throws -> Int16 {
            guard let p = try fieldPosition(slot, size: 2, name) else { return def }
            return Int16(bitPattern: buffer.loadU16(p))
        }
        public func uint32(_ slot: Int, _ name: String, default def: UInt32 = 0) throws -> UInt32 {
            guard let p = try fieldPosition(slot, size: 4, name) else { return def }
            return buffer.loadU32(p)
        }
        public func int32(_ slot: Int, _ name: String, default def: Int32 = 0) throws -> Int32 {
            guard let p = try fieldPosition(slot, size: 4, name) else { return def }
            return Int32(bitPattern: buffer.loadU32(p))
        }
        public func uint64(_ slot: Int, _ name: String, default def: UInt64 = 0) throws -> UInt64 {
            guard let p = try fieldPosition(slot, size: 8, name) else { return def }
            return buffer.loadU64(p)
        }
        public func int64(_ slot: Int, _ name: String, default def: Int64 = 0) throws -> Int64 {
            guard let p = try fieldPosition(slot, size: 8, name) else { return def }
            return Int64(bitPattern: buffer.loadU64(p))
        }
        public func float32(_ slot: Int, _ name: String, default def: Float = 0) throws -> Float {
            guard let p = try fieldPosition(slot, size: 4, name) else { return def }
            return Float(bitPattern: buffer.loadU32(p))
        }

        // Offset fields

        /// Absolute position an offset field points to, or nil if the field is absent.
        /// The target itself is not checked here.
        public func offsetTarget(_ slot: Int, _ name: String) throws -> Int? {
            guard let p = try fieldPosition(slot, size: 4, name) else { return nil }
            return p + Int(buffer.loadU32(p))
        }

        /// A sub-table, or nil if absent.
        public func table(_ slot: Int, _ name: String, path subPath: String? = nil) throws -> Table? {
            guard let target = try offsetTarget(slot, name) else { return nil }
            return try buffer.table(at: target, path: subPath ?? "\(path) \(name)")
        }

        /// A string (invalid UTF-8 is replaced, never trapped on), or nil if absent.
        public func string(_ slot: Int, _ name: String) throws -> String? {
            guard let v = try vector(slot, name, elementSize: 1) else { return nil }
            return String(decoding: buffer.bytes[v.start..<(v.start + v.count)], as: UTF8.self)
        }

        /// A vector of `elementSize`-byte elements, or nil if absent. The whole vector is
        /// checked to lie inside the buffer before anything is allocated.
        public func vector(_ slot: Int, _ name: String, elementSize: Int) throws -> Vector? {
            guard let target = try offsetTarget(slot, name) else { return nil }
            return try buffer.vector(at: target, elementSize: elementSize, path: "\(path) \(name)")
        }

        /// A union: its type byte (slot `typeSlot`) and value table (slot `typeSlot + 1`).
        /// Type 0 (NONE) gives (0, nil) without looking at the value; a non-zero type may
        /// still have no value (the FlatBuffers verifier allows it), which gives (type, nil).
        public func union(typeSlot: Int, _ name: String) throws -> (type: UInt8, table: Table?) {
            let type = try uint8(typeSlot, "\(name)_type")
            if type == 0 { return (0, nil) }
            return (type, try table(typeSlot + 1, name))
        }
    }

    /// The vector whose length word is at `position`.
    public func vector(at position: Int, elementSize: Int, path: String) throws -> Vector {
        try require(position, 4, "\(path) length")
        let n = Int(loadU32(position))
        let byteCount = n * elementSize  // n < 2^32, elementSize <= 8: no overflow
        if position + 4 > count - byteCount {
            throw TFLiteError("truncated or corrupt file: \(path) (\(n) elements of \(elementSize) bytes) runs past the end (offset \(position + 4 + byteCount) of \(count))")
        }
        try charge(byteCount + 4, path)
        return Vector(buffer: self, start: position + 4, count: n, elementSize: elementSize, path: path)
    }

    // MARK: Vector

    public struct Vector {
        public let buffer: FlatBuffer
        /// Position of element 0.
        public let start: Int
        public let count: Int
        public let elementSize: Int
        public let path: String

        /// Byte range of the elements in the buffer.
        public var byteRange: Range<Int> { start..<(start + count * elementSize) }

        public func uint8s() -> [UInt8] { Array(buffer.bytes[byteRange]) }
        public func uint16s() -> [UInt16] { (0..<count).map { buffer.loadU16(start + 2 * $0) } }
        public func int32s() -> [Int32] { (0..<count).map { Int32(bitPattern: buffer.loadU32(start + 4 * $0)) } }

        /// Element `index` of a vector of tables (elementSize must be 4).
        public func table(_ index: Int, path elementPath: String) throws -> Table {
            guard index >= 0, index < count, elementSize == 4 else {
                throw TFLiteError("internal error: \(path) element \(index) of \(count) requested")
            }
            let p = start + 4 * index
            return try buffer.table(at: p + Int(buffer.loadU32(p)), path: elementPath)
        }

        /// Element `index` of a vector of strings (elementSize must be 4).
        public func string(_ index: Int, path elementPath: String) throws -> String {
            guard index >= 0, index < count, elementSize == 4 else {
                throw TFLiteError("internal error: \(path) element \(index) of \(count) requested")
            }
            let p = start + 4 * index
            let v = try buffer.vector(at: p + Int(buffer.loadU32(p)), elementSize: 1, path: elementPath)
            return String(decoding: buffer.bytes[v.byteRange], as: UTF8.self)
        }
    }
}
