// A small, safe Swift layer over the HDF5 C library (libhdf5 1.10, serial, thread-safe
// build on Debian 12): files, groups, float32/float64 datasets of 1–3 dimensions
// (chunked + shuffled + gzip-compressed when big), scalar and string-array attributes.
//
// Rules this file keeps:
// - Every failure is an `HDF5Error` whose message is one line naming the file and the
//   object ("STORE.h5: /clips/000001: dataset keypoints missing"). HDF5's automatic
//   error-stack printing is switched off (per thread, the library is built thread-safe),
//   so nothing else reaches the user; the innermost HDF5 reason is appended in brackets.
// - Every hid_t is closed: objects close in `deinit` (or `close()`), temporaries by `defer`.
//   Groups and datasets keep their file alive, so the file closes last.
// - Strings are written as variable-length UTF-8 (what h5py ≥ 3 reads back as `str`);
//   fixed-length strings written by other tools are read too.
// - The C macros H5P_DEFAULT, H5S_ALL, H5E_DEFAULT are hid_t 0; H5F_ACC_* are the literal
//   flags of H5Fpublic.h; the predefined types are the `_g` globals, valid after H5open().
import Basics
import CHDF5
import Foundation

/// Something went wrong reading or writing an HDF5 file: one line, naming file and object.
public enum HDF5Failure {}
public typealias HDF5Error = OneLineError<HDF5Failure>

/// Numeric element types the wrapper reads and writes.
public protocol HDF5Numeric {
    /// The type in memory (native byte order).
    static var hdf5MemoryType: hid_t { get }
    /// The type stored in files (little endian, IEEE).
    static var hdf5FileType: hid_t { get }
    static var hdf5Zero: Self { get }
}

extension Float: HDF5Numeric {
    public static var hdf5MemoryType: hid_t { HDF5.ready(); return H5T_NATIVE_FLOAT_g }
    public static var hdf5FileType: hid_t { HDF5.ready(); return H5T_IEEE_F32LE_g }
    public static var hdf5Zero: Float { 0 }
}

extension Double: HDF5Numeric {
    public static var hdf5MemoryType: hid_t { HDF5.ready(); return H5T_NATIVE_DOUBLE_g }
    public static var hdf5FileType: hid_t { HDF5.ready(); return H5T_IEEE_F64LE_g }
    public static var hdf5Zero: Double { 0 }
}

/// A value of an attribute, whatever its type in the file.
public enum HDF5AttributeValue: Equatable, Sendable {
    case int(Int)
    case double(Double)
    case string(String)
    case strings([String])
    case ints([Int])
    case doubles([Double])
    /// Text for messages and generic listings.
    public var text: String {
        switch self {
        case .int(let v): return String(v)
        case .double(let v): return String(v)
        case .string(let v): return v
        case .strings(let v): return v.joined(separator: ", ")
        case .ints(let v): return v.map(String.init).joined(separator: ", ")
        case .doubles(let v): return v.map { String($0) }.joined(separator: ", ")
        }
    }
}

/// Library-wide set-up and the error helpers.
public enum HDF5 {
    /// Above this many bytes a dataset is stored chunked, shuffled and gzip-compressed.
    public static let compressionThreshold = 4096
    /// gzip (deflate) level of compressed datasets.
    public static let deflateLevel: UInt32 = 4
    /// Upper bound of a chunk's size; chunks split the first axis.
    public static let maxChunkBytes = 1 << 20
    /// Half the entries of a chunk-index B-tree node in files we create (HDF5's default is 32).
    public static let chunkIndexK: UInt32 = 4

    // Values of C macros that do not import into Swift.
    static let P_DEFAULT: hid_t = 0          // H5P_DEFAULT
    static let S_ALL: hid_t = 0              // H5S_ALL
    static let E_DEFAULT: hid_t = 0          // H5E_DEFAULT
    static let F_ACC_RDONLY: UInt32 = 0x0000 // H5F_ACC_RDONLY
    static let F_ACC_RDWR: UInt32 = 0x0001   // H5F_ACC_RDWR
    static let F_ACC_TRUNC: UInt32 = 0x0002  // H5F_ACC_TRUNC
    static let T_VARIABLE: Int = -1          // H5T_VARIABLE, (size_t)(-1)

    /// No clean-up at exit: libhdf5's own would flush files whose writes already failed (a
    /// full disk) and crash inside the library after poseact printed its line. Every file
    /// poseact writes is closed (or abandoned and removed) before the process ends.
    private static let opened: Bool = { H5dont_atexit(); return H5open() >= 0 }()

    /// Initialises the library (once) and silences the automatic error printing on this
    /// thread (the setting is per thread in a thread-safe build). Cheap; called before
    /// every operation that may fail.
    @inline(__always) static func ready() {
        _ = opened
        H5Eset_auto2(E_DEFAULT, nil, nil)
    }

    /// The innermost reason on HDF5's error stack ("file signature not found"), then clears it.
    static func reason() -> String? {
        final class Box { var first: String? }
        let box = Box()
        let walker: H5E_walk2_t = { n, err, data in
            guard let data, let err else { return 0 }
            let box = Unmanaged<Box>.fromOpaque(data).takeUnretainedValue()
            if box.first == nil, let desc = err.pointee.desc {
                let text = String(cString: desc).trimmingCharacters(in: .whitespacesAndNewlines)
                if !text.isEmpty { box.first = text }
            }
            return 0
        }
        let unmanaged = Unmanaged.passRetained(box)
        H5Ewalk2(E_DEFAULT, H5E_WALK_UPWARD, walker, unmanaged.toOpaque())
        unmanaged.release()
        H5Eclear2(E_DEFAULT)
        guard var text = box.first else { return nil }
        // HDF5 sometimes puts long "name = '…', tent_flags = …" tails in; keep the sentence.
        for tail in [": name = ", ": time = ", ", time = "] {
            if let cut = text.range(of: tail) { text = String(text[..<cut.lowerBound]) }
        }
        if text.contains("write failed") { text += "; is the disk full?" }
        return text.replacingOccurrences(of: "\n", with: " ")
    }

    /// File access properties (caller closes; 0 = defaults when they cannot be made): file
    /// locking on, but ignored where the file system has it disabled (NFS, Lustre on
    /// clusters), where HDF5 1.10 would otherwise refuse to open the file.
    static func accessProperties() -> hid_t {
        let fapl = H5Pcreate(H5P_CLS_FILE_ACCESS_ID_g)
        guard fapl >= 0 else { H5Eclear2(E_DEFAULT); return P_DEFAULT }
        if H5Pset_file_locking(fapl, true, true) < 0 { H5Eclear2(E_DEFAULT) }
        return fapl
    }


    /// Whether `path` is an HDF5 file (false for a missing or unreadable file too).
    public static func isHDF5(_ path: String) -> Bool {
        // A FIFO would make libhdf5 wait for a writer for ever.
        guard (try? InputFile.check(path)) != nil else { return false }
        ready()
        let r = H5Fis_hdf5(path)
        if r < 0 { H5Eclear2(E_DEFAULT) }
        return r > 0
    }
}

/// A named thing inside a file: its path for messages, and the error constructor.
public class HDF5Object {
    public let file: HDF5File
    /// Absolute path inside the file, "/" for the root group.
    public let objectPath: String
    var id: hid_t

    init(file: HDF5File, objectPath: String, id: hid_t) {
        self.file = file; self.objectPath = objectPath; self.id = id
    }

    /// "FILE: /obj: what (HDF5's reason)"; the root group is not named.
    func error(_ what: String, hdf5: Bool = false) -> HDF5Error {
        var text = objectPath == "/" ? "\(file.path): \(what)" : "\(file.path): \(objectPath): \(what)"
        if hdf5, let reason = HDF5.reason() { text += " (\(reason))" }
        return HDF5Error(text)
    }

    func childPath(_ name: String) -> String { objectPath == "/" ? "/" + name : objectPath + "/" + name }

    /// Checks an hid_t result; a negative one throws.
    @discardableResult
    func check(_ r: hid_t, _ what: @autoclosure () -> String) throws -> hid_t {
        if r < 0 { throw error(what(), hdf5: true) }
        return r
    }

    @discardableResult
    func check(_ r: herr_t, _ what: @autoclosure () -> String) throws -> herr_t {
        if r < 0 { throw error(what(), hdf5: true) }
        return r
    }

    /// Runs one of HDF5's name iterations (attributes, links), collecting the names in order.
    func collectNames(_ what: String, _ iterate: (inout hsize_t, UnsafeMutableRawPointer) -> herr_t) throws -> [String] {
        HDF5.ready()
        let list = Unmanaged.passRetained(NameList())
        defer { list.release() }
        var index: hsize_t = 0
        try check(iterate(&index, list.toOpaque()), what)
        return list.takeUnretainedValue().names
    }

    // MARK: attributes

    /// Names of the attributes, in name order.
    public func attributeNames() throws -> [String] {
        try collectNames("cannot list attributes") { index, list in
            H5Aiterate2(id, H5_INDEX_NAME, H5_ITER_INC, &index, { _, name, _, data in appendName(name, to: data) }, list)
        }
    }

    public func hasAttribute(_ name: String) throws -> Bool {
        HDF5.ready()
        let r = H5Aexists(id, name)
        try check(r, "cannot look for attribute \(name)")
        return r > 0
    }

    /// Removes attribute `name` if there is one.
    public func removeAttribute(_ name: String) throws {
        HDF5.ready()
        if try hasAttribute(name) { try check(H5Adelete(id, name), "cannot remove attribute \(name)") }
    }

    /// Creates (or replaces) attribute `name` of `type` over `space` and writes `buffer`.
    private func writeAttribute(_ name: String, fileType: hid_t, memoryType: hid_t, space: hid_t,
                                _ buffer: UnsafeRawPointer?) throws {
        HDF5.ready()
        if try hasAttribute(name) { try check(H5Adelete(id, name), "cannot replace attribute \(name)") }
        let attr = try check(H5Acreate2(id, name, fileType, space, HDF5.P_DEFAULT, HDF5.P_DEFAULT),
                             "cannot create attribute \(name)")
        defer { H5Aclose(attr) }
        if let buffer { try check(H5Awrite(attr, memoryType, buffer), "cannot write attribute \(name)") }
    }

    private func scalarSpace() throws -> hid_t { try check(H5Screate(H5S_SCALAR), "cannot create a dataspace") }

    public func setAttribute(_ name: String, _ value: Int) throws {
        HDF5.ready()
        let space = try scalarSpace(); defer { H5Sclose(space) }
        var v = Int64(value)
        try writeAttribute(name, fileType: H5T_STD_I64LE_g, memoryType: H5T_NATIVE_INT64_g, space: space, &v)
    }

    public func setAttribute(_ name: String, _ value: Double) throws {
        HDF5.ready()
        let space = try scalarSpace(); defer { H5Sclose(space) }
        var v = value
        try writeAttribute(name, fileType: H5T_IEEE_F64LE_g, memoryType: H5T_NATIVE_DOUBLE_g, space: space, &v)
    }

    /// A variable-length UTF-8 string type (caller closes it).
    private func utf8Type() throws -> hid_t {
        let t = try check(H5Tcopy(H5T_C_S1_g), "cannot make a string type")
        guard H5Tset_size(t, HDF5.T_VARIABLE) >= 0, H5Tset_cset(t, H5T_CSET_UTF8) >= 0 else {
            H5Tclose(t); throw error("cannot make a string type", hdf5: true)
        }
        return t
    }

    /// Writes `strings` as C strings (the buffer HDF5 wants for variable-length strings).
    private func withCStrings<R>(_ strings: [String], _ body: (UnsafeRawPointer) throws -> R) throws -> R {
        for s in strings where s.utf8.contains(0) { throw error("a string with a NUL character cannot be stored: \(s.debugDescription)") }
        var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        return try pointers.withUnsafeMutableBytes { try body($0.baseAddress!) }
    }

    /// A scalar variable-length UTF-8 string (h5py reads it as `str`).
    public func setAttribute(_ name: String, _ value: String) throws {
        HDF5.ready()
        let type = try utf8Type(); defer { H5Tclose(type) }
        let space = try scalarSpace(); defer { H5Sclose(space) }
        try withCStrings([value]) { try writeAttribute(name, fileType: type, memoryType: type, space: space, $0) }
    }

    /// A 1-D array of variable-length UTF-8 strings (h5py: an array of `str`); an empty
    /// array is stored with a null dataspace (h5py: `h5py.Empty`).
    public func setAttribute(_ name: String, _ values: [String]) throws {
        HDF5.ready()
        let type = try utf8Type(); defer { H5Tclose(type) }
        var dims = [hsize_t(values.count)]
        let space = values.isEmpty ? try check(H5Screate(H5S_NULL), "cannot create a dataspace")
                                   : try check(H5Screate_simple(1, &dims, nil), "cannot create a dataspace")
        defer { H5Sclose(space) }
        if values.isEmpty {
            try writeAttribute(name, fileType: type, memoryType: type, space: space, nil)
        } else {
            try withCStrings(values) { try writeAttribute(name, fileType: type, memoryType: type, space: space, $0) }
        }
    }

    /// A 1-D array of 64-bit integers or of doubles, as `attribute` reads them back.
    public func setAttribute(_ name: String, _ values: [Int]) throws {
        HDF5.ready()
        var dims = [hsize_t(values.count)]
        let space = try check(values.isEmpty ? H5Screate(H5S_NULL) : H5Screate_simple(1, &dims, nil), "cannot create a dataspace")
        defer { H5Sclose(space) }
        let v = values.map { Int64($0) }
        try v.withUnsafeBytes { try writeAttribute(name, fileType: H5T_STD_I64LE_g, memoryType: H5T_NATIVE_INT64_g, space: space, values.isEmpty ? nil : $0.baseAddress) }
    }

    public func setAttribute(_ name: String, _ values: [Double]) throws {
        HDF5.ready()
        var dims = [hsize_t(values.count)]
        let space = try check(values.isEmpty ? H5Screate(H5S_NULL) : H5Screate_simple(1, &dims, nil), "cannot create a dataspace")
        defer { H5Sclose(space) }
        try values.withUnsafeBytes { try writeAttribute(name, fileType: H5T_IEEE_F64LE_g, memoryType: H5T_NATIVE_DOUBLE_g, space: space, values.isEmpty ? nil : $0.baseAddress) }
    }

    /// Writes a value as `attribute` read it.
    public func setAttribute(_ name: String, _ value: HDF5AttributeValue) throws {
        switch value {
        case .int(let v): try setAttribute(name, v)
        case .double(let v): try setAttribute(name, v)
        case .string(let v): try setAttribute(name, v)
        case .strings(let v): try setAttribute(name, v)
        case .ints(let v): try setAttribute(name, v)
        case .doubles(let v): try setAttribute(name, v)
        }
    }

    /// Reads attribute `name`, whatever its type: numbers as Int/Double, strings (fixed or
    /// variable length) as String, 1-D arrays as arrays.
    public func attribute(_ name: String) throws -> HDF5AttributeValue {
        HDF5.ready()
        guard try hasAttribute(name) else { throw error("attribute \(name) missing") }
        let attr = try check(H5Aopen(id, name, HDF5.P_DEFAULT), "cannot open attribute \(name)")
        defer { H5Aclose(attr) }
        let type = try check(H5Aget_type(attr), "cannot read the type of attribute \(name)")
        defer { H5Tclose(type) }
        let space = try check(H5Aget_space(attr), "cannot read the shape of attribute \(name)")
        defer { H5Sclose(space) }
        let spaceClass = H5Sget_simple_extent_type(space)
        let rank = H5Sget_simple_extent_ndims(space)
        let count = spaceClass == H5S_NULL ? 0 : Int(H5Sget_simple_extent_npoints(space))
        let isScalar = spaceClass == H5S_SCALAR
        if rank > 1 { throw error("attribute \(name) has \(rank) dimensions; expected at most 1") }

        switch H5Tget_class(type) {
        case H5T_STRING:
            var strings: [String] = []
            if count > 0 {
                if H5Tis_variable_str(type) > 0 {
                    let memType = try utf8Type(); defer { H5Tclose(memType) }
                    var pointers = [UnsafeMutablePointer<CChar>?](repeating: nil, count: count)
                    try check(H5Aread(attr, memType, &pointers), "cannot read attribute \(name)")
                    strings = pointers.map { $0.map { String(cString: $0) } ?? "" }
                    H5Dvlen_reclaim(memType, space, HDF5.P_DEFAULT, &pointers)
                } else {
                    let size = H5Tget_size(type)
                    guard size > 0 else { throw error("attribute \(name) has a bad string size", hdf5: true) }
                    let memType = try check(H5Tcopy(type), "cannot read attribute \(name)")
                    defer { H5Tclose(memType) }
                    var bytes = [UInt8](repeating: 0, count: size * count)
                    try check(H5Aread(attr, memType, &bytes), "cannot read attribute \(name)")
                    let pad = H5Tget_strpad(type)
                    for i in 0..<count {
                        var item = bytes[i * size..<(i + 1) * size]
                        if let nul = item.firstIndex(of: 0) { item = item[..<nul] }
                        var s = String(decoding: item, as: UTF8.self)
                        if pad == H5T_STR_SPACEPAD { while s.hasSuffix(" ") { s.removeLast() } }
                        strings.append(s)
                    }
                }
            }
            return isScalar ? .string(strings.first ?? "") : .strings(strings)
        case H5T_INTEGER:
            var values = [Int64](repeating: 0, count: count)
            if count > 0 { try check(H5Aread(attr, H5T_NATIVE_INT64_g, &values), "cannot read attribute \(name)") }
            return isScalar ? .int(Int(values.first ?? 0)) : .ints(values.map { Int($0) })
        case H5T_FLOAT:
            var values = [Double](repeating: 0, count: count)
            if count > 0 { try check(H5Aread(attr, H5T_NATIVE_DOUBLE_g, &values), "cannot read attribute \(name)") }
            return isScalar ? .double(values.first ?? 0) : .doubles(values)
        default:
            throw error("attribute \(name) has a type this reader does not handle")
        }
    }

    public func intAttribute(_ name: String) throws -> Int {
        switch try attribute(name) {
        case .int(let v): return v
        case .double(let v) where v.rounded() == v && abs(v) < 9e15: return Int(v)
        default: throw error("attribute \(name) is not an integer")
        }
    }

    public func doubleAttribute(_ name: String) throws -> Double {
        switch try attribute(name) {
        case .double(let v): return v
        case .int(let v): return Double(v)
        default: throw error("attribute \(name) is not a number")
        }
    }

    public func stringAttribute(_ name: String) throws -> String {
        guard case .string(let v) = try attribute(name) else { throw error("attribute \(name) is not a string") }
        return v
    }

    public func stringArrayAttribute(_ name: String) throws -> [String] {
        switch try attribute(name) {
        case .strings(let v): return v
        case .string(let v): return [v]
        default: throw error("attribute \(name) is not a list of strings")
        }
    }
}

/// An open HDF5 file. `create` truncates; `open` is read-only unless asked.
public final class HDF5File {
    /// The name every message uses: the path as given, or the output a temporary file becomes.
    public let path: String
    /// Where the file is.
    let location: String
    private(set) var id: hid_t
    /// Opened for writing: the checksum is renewed at close.
    private let writable: Bool

    private init(path: String, location: String, id: hid_t, writable: Bool) {
        self.path = path; self.location = location; self.id = id; self.writable = writable
    }

    /// Creates (truncating) the file at `location`, named `path` in messages (the output a
    /// temporary file becomes; `location` itself by default).
    public static func create(_ location: String, shownAs path: String? = nil) throws -> HDF5File {
        let path = path ?? location
        HDF5.ready()
        // Small chunk-index B-tree nodes (HDF5.chunkIndexK): most datasets here have one
        // chunk, and the default node (64 entries, ~2.6 KB) would outweigh a clip's data.
        // The format stays the earliest one, readable by any HDF5 ≥ 1.8 (h5py, h5dump, MATLAB).
        let fcpl = H5Pcreate(H5P_CLS_FILE_CREATE_ID_g)
        if fcpl >= 0 { H5Pset_istore_k(fcpl, HDF5.chunkIndexK); H5Pset_userblock(fcpl, hsize_t(FileChecksum.userBlock)) }
        defer { if fcpl >= 0 { H5Pclose(fcpl) } }
        let fapl = HDF5.accessProperties()
        defer { if fapl > 0 { H5Pclose(fapl) } }
        let fid = H5Fcreate(location, HDF5.F_ACC_TRUNC, max(fcpl, HDF5.P_DEFAULT), fapl)
        if fid < 0 {
            let reason = HDF5.reason()
            let dir = (path as NSString).deletingLastPathComponent
            if !dir.isEmpty && !FileManager.default.fileExists(atPath: dir) {
                throw HDF5Error("\(path): cannot create (no folder \(dir))")
            }
            throw HDF5Error("\(path): cannot create" + (reason.map { " (\($0))" } ?? ""))
        }
        return HDF5File(path: path, location: location, id: fid, writable: true)
    }

    /// Opens an existing file, read-only unless `writable`. A file this process did not
    /// write itself is read through a copy `HDF5Copy` re-encodes in a child process.
    public static func open(_ path: String, writable: Bool = false) throws -> HDF5File {
        HDF5.ready()
        do { try InputFile.check(path) } catch let error as InputFileError { throw HDF5Error(error.message) }
        let isH5 = H5Fis_hdf5(path)
        if isH5 <= 0 { H5Eclear2(HDF5.E_DEFAULT); throw HDF5Error("\(path): not an HDF5 file (or damaged)") }
        // Before libhdf5 reads a byte of it: the checksum poseact writes into its files tells
        // an accident (a cut copy) in one plain line. It is no seal, since anyone can compute
        // it: every file this process did not write itself goes through `HDF5Copy`.
        if FileChecksum.verify(path) == false {
            throw HDF5Error("\(path): damaged: its contents do not match the checksum poseact wrote with it (changed or cut short since)")
        }
        if writable {
            try HDF5Copy.check(path)
            return try openTrusted(path, writable: true)
        }
        return try HDF5Copy.open(path)
    }

    /// Opens a file whose bytes are known to be safe for libhdf5 (checked by the caller),
    /// at `location`, named `path` in messages.
    static func openTrusted(_ location: String, shownAs path: String? = nil, writable: Bool) throws -> HDF5File {
        let path = path ?? location
        let fapl = HDF5.accessProperties()
        defer { if fapl > 0 { H5Pclose(fapl) } }
        let fid = H5Fopen(location, writable ? HDF5.F_ACC_RDWR : HDF5.F_ACC_RDONLY, fapl)
        if fid < 0 {
            let reason = HDF5.reason()
            throw HDF5Error("\(path): cannot open" + (reason.map { " (\($0))" } ?? "") + "; the file may be damaged")
        }
        return HDF5File(path: path, location: location, id: fid, writable: writable)
    }

    /// A read-only file identifier for `HDF5Copy` to keep (it is never closed), through
    /// which `reopen` opens the file again after its path is gone.
    static func openKept(_ location: String, shownAs path: String) throws -> hid_t {
        let fapl = HDF5.accessProperties()
        defer { if fapl > 0 { H5Pclose(fapl) } }
        let fid = H5Fopen(location, HDF5.F_ACC_RDONLY, fapl)
        if fid < 0 { throw HDF5Error("\(path): cannot open its checked copy" + (HDF5.reason().map { " (\($0))" } ?? "")) }
        return fid
    }

    /// Lets a kept file go: closed once no object of it is open.
    static func closeKept(_ kept: hid_t) {
        HDF5.ready()
        H5Fclose(kept)
    }

    /// A new identifier of a file kept open by `openKept`, named `path` in messages.
    static func reopen(_ kept: hid_t, shownAs path: String) throws -> HDF5File {
        HDF5.ready()
        let fid = H5Freopen(kept)
        if fid < 0 { throw HDF5Error("\(path): cannot open its checked copy" + (HDF5.reason().map { " (\($0))" } ?? "")) }
        return HDF5File(path: path, location: path, id: fid, writable: false)
    }

    /// The root group "/".
    public func root() throws -> HDF5Group { try HDF5Group(openIn: self, locationID: id, name: "/", path: "/") }

    /// Opens a group by absolute path ("/clips").
    public func group(_ path: String) throws -> HDF5Group { try root().group(path.hasPrefix("/") ? String(path.dropFirst()) : path) }

    /// Flushes and closes the file. Objects still open keep it open until they close (HDF5's
    /// "weak" close), so this never invalidates them. Safe to call twice.
    public func close() throws {
        guard id >= 0 else { return }
        HDF5.ready()
        // Only the file itself open: H5Fclose really closes it, and the bytes are final.
        let alone = H5Fget_obj_count(id, 0x1F) == 1   // H5F_OBJ_ALL: files, datasets, groups, types, attributes
        let r = H5Fclose(id)
        id = -1
        if r < 0 { throw HDF5Error("\(path): cannot close" + (HDF5.reason().map { " (\($0))" } ?? "")) }
        if writable {
            try FileChecksum.write(location, valid: alone)
            if alone { HDF5Copy.wroteItself(location) }
        }
    }

    func ensureOpen() throws { if id < 0 { throw HDF5Error("\(path): file already closed") } }

    deinit {
        guard id >= 0 else { return }
        HDF5.ready(); H5Fclose(id)
        if writable { try? FileChecksum.write(location, valid: false) }
    }
}

/// A group: children (groups and datasets) and attributes.
public final class HDF5Group: HDF5Object {
    init(openIn file: HDF5File, locationID: hid_t, name: String, path: String) throws {
        HDF5.ready()
        try file.ensureOpen()
        let gid = H5Gopen2(locationID, name, HDF5.P_DEFAULT)
        if gid < 0 { H5Eclear2(HDF5.E_DEFAULT) }
        super.init(file: file, objectPath: path, id: gid)
        if gid < 0 { throw HDF5Error("\(file.path): cannot open group \(path)") }
    }

    private init(file: HDF5File, path: String, id: hid_t) { super.init(file: file, objectPath: path, id: id) }

    deinit { if id >= 0 { HDF5.ready(); H5Gclose(id) } }

    /// Closes now rather than when the last reference goes.
    public func close() { if id >= 0 { HDF5.ready(); H5Gclose(id); id = -1 } }

    /// Object creation properties that leave out modification times, so that the same
    /// content gives the same bytes.
    private static func noTimes(_ cls: hid_t) -> hid_t {
        let plist = H5Pcreate(cls)
        if plist >= 0 { H5Pset_obj_track_times(plist, false) }
        return plist
    }

    /// Whether a link `name` exists here (a direct child, no "/" inside).
    public func has(_ name: String) throws -> Bool {
        HDF5.ready()
        let r = H5Lexists(id, name, HDF5.P_DEFAULT)
        try check(r, "cannot look for \(name)")
        return r > 0
    }

    /// What a child is.
    public enum Kind: Sendable { case group, dataset, other }

    public func kind(of name: String) throws -> Kind {
        HDF5.ready()
        guard try has(name) else { throw error("\(name) missing") }
        let oid = try check(H5Oopen(id, name, HDF5.P_DEFAULT), "cannot open \(name)")
        defer { H5Oclose(oid) }
        switch H5Iget_type(oid) {
        case H5I_GROUP: return .group
        case H5I_DATASET: return .dataset
        default: return .other
        }
    }

    /// Creates a child group.
    @discardableResult
    public func createGroup(_ name: String) throws -> HDF5Group {
        HDF5.ready()
        let gcpl = HDF5Group.noTimes(H5P_CLS_GROUP_CREATE_ID_g)
        defer { if gcpl >= 0 { H5Pclose(gcpl) } }
        let gid = try check(H5Gcreate2(id, name, HDF5.P_DEFAULT, max(gcpl, 0), HDF5.P_DEFAULT), "cannot create group \(name)")
        return HDF5Group(file: file, path: childPath(name), id: gid)
    }

    /// Opens a child group (a relative path "a/b" works too).
    public func group(_ name: String) throws -> HDF5Group {
        HDF5.ready()
        if name.isEmpty { return try HDF5Group(openIn: file, locationID: id, name: ".", path: objectPath) }
        guard try existsPath(name) else { throw error("group \(name) missing") }
        let gid = H5Gopen2(id, name, HDF5.P_DEFAULT)
        if gid < 0 { throw error("\(name) is not a group", hdf5: true) }
        return HDF5Group(file: file, path: childPath(name), id: gid)
    }

    /// Like `has`, for a relative path: each step must exist.
    private func existsPath(_ path: String) throws -> Bool {
        var prefix = ""
        for part in path.split(separator: "/") {
            prefix += prefix.isEmpty ? String(part) : "/" + part
            let r = H5Lexists(id, prefix, HDF5.P_DEFAULT)
            if r < 0 { H5Eclear2(HDF5.E_DEFAULT); return false }
            if r == 0 { return false }
        }
        return true
    }

    /// Names of the children (links), in name order.
    public func children() throws -> [String] {
        try collectNames("cannot list the children") { index, list in
            H5Literate(id, H5_INDEX_NAME, H5_ITER_INC, &index, { _, name, _, data in appendName(name, to: data) }, list)
        }
    }

    /// Renames (moves) a child link within this group.
    public func move(_ name: String, to newName: String) throws {
        HDF5.ready()
        try check(H5Lmove(id, name, id, newName, HDF5.P_DEFAULT, HDF5.P_DEFAULT), "cannot rename \(name) to \(newName)")
    }

    /// Removes a child link (the space it used is not reclaimed until the file is repacked).
    public func remove(_ name: String) throws {
        HDF5.ready()
        try check(H5Ldelete(id, name, HDF5.P_DEFAULT), "cannot delete \(name)")
    }

    // MARK: datasets

    /// Writes `values` (row-major) as a new dataset of `shape` (1–3 dimensions, each ≥ 0).
    /// Datasets bigger than `HDF5.compressionThreshold` bytes are chunked along the first
    /// axis, shuffled and gzip-compressed; empty ones are contiguous with no data.
    @discardableResult
    public func write<T: HDF5Numeric>(_ name: String, _ values: [T], shape: [Int]) throws -> HDF5Dataset {
        guard (1...3).contains(shape.count) else { throw error("dataset \(name): \(shape.count) dimensions; 1 to 3 supported") }
        return try write(name, values, anyShape: shape)
    }

    /// `write` for 0 (a scalar) to 32 dimensions: a copy keeps what another tool wrote (at
    /// `deflateLevel`, lower for a copy that lives only while a command runs).
    @discardableResult
    func write<T: HDF5Numeric>(_ name: String, _ values: [T], anyShape shape: [Int], deflateLevel: UInt32 = HDF5.deflateLevel) throws -> HDF5Dataset {
        HDF5.ready()
        guard shape.count <= 32 else { throw error("dataset \(name): \(shape.count) dimensions; at most 32") }
        guard shape.allSatisfy({ $0 >= 0 }) else { throw error("dataset \(name): negative dimension in \(shape)") }
        let count = shape.reduce(1, *)
        guard count == values.count else {
            throw error("dataset \(name): \(values.count) values do not fill shape \(shape) (\(count))")
        }
        var dims = shape.map { hsize_t($0) }
        let space = try check(shape.isEmpty ? H5Screate(H5S_SCALAR) : H5Screate_simple(Int32(shape.count), &dims, nil),
                              "dataset \(name): cannot create a dataspace")
        defer { H5Sclose(space) }
        let dcpl = try check(HDF5Group.noTimes(H5P_CLS_DATASET_CREATE_ID_g), "dataset \(name): cannot create properties")
        defer { H5Pclose(dcpl) }
        let bytes = count * MemoryLayout<T>.size
        if !shape.isEmpty && count > 0 && bytes > HDF5.compressionThreshold {
            let rowBytes = max(1, shape.dropFirst().reduce(1, *) * MemoryLayout<T>.size)
            var chunk = dims
            chunk[0] = hsize_t(max(1, min(shape[0], HDF5.maxChunkBytes / rowBytes)))
            try check(H5Pset_chunk(dcpl, Int32(shape.count), &chunk), "dataset \(name): cannot set chunking")
            try check(H5Pset_shuffle(dcpl), "dataset \(name): cannot set shuffling")
            try check(H5Pset_deflate(dcpl, deflateLevel), "dataset \(name): cannot set compression")
        }
        let did = try check(H5Dcreate2(id, name, T.hdf5FileType, space, HDF5.P_DEFAULT, dcpl, HDF5.P_DEFAULT),
                            "cannot create dataset \(name)")
        let dataset = HDF5Dataset(file: file, objectPath: childPath(name), id: did)
        if count > 0 {
            _ = try values.withUnsafeBytes { buffer in
                try check(H5Dwrite(did, T.hdf5MemoryType, HDF5.S_ALL, HDF5.S_ALL, HDF5.P_DEFAULT, buffer.baseAddress),
                          "cannot write dataset \(name)")
            }
        }
        return dataset
    }

    /// Opens a child dataset.
    public func dataset(_ name: String) throws -> HDF5Dataset {
        HDF5.ready()
        guard try existsPath(name) else { throw error("dataset \(name) missing") }
        let did = H5Dopen2(id, name, HDF5.P_DEFAULT)
        if did < 0 { throw error("\(name) is not a dataset", hdf5: true) }
        let dataset = HDF5Dataset(file: file, objectPath: childPath(name), id: did)
        try dataset.checkStorageIsInside()
        return dataset
    }

    /// Whether the link `name` (a direct child) is a hard link (true) or a soft one (false);
    /// one to another file, or of a kind a plug-in defines, is refused.
    public func checkLinkIsInside(_ name: String) throws -> Bool {
        HDF5.ready()
        var info = H5L_info_t()
        try check(H5Lget_info(id, name, &info, HDF5.P_DEFAULT), "cannot read the link \(name)")
        switch info.type {
        case H5L_TYPE_HARD: return true
        case H5L_TYPE_SOFT: return false
        case H5L_TYPE_EXTERNAL:
            throw error("\(name) is a link to another file (an HDF5 external link); poseact reads only what a file holds itself")
        default:
            throw error("\(name) is a link of a kind poseact does not read (user-defined link \(info.type.rawValue))")
        }
    }

    /// Reads a whole numeric dataset (converted to `T`) and its shape.
    public func read<T: HDF5Numeric>(_ name: String, as: T.Type = T.self) throws -> (values: [T], shape: [Int]) {
        let d = try dataset(name)
        defer { d.close() }
        return try d.read(as: T.self)
    }
}

/// A dataset: shape, contents and attributes.
public final class HDF5Dataset: HDF5Object {
    deinit { if id >= 0 { HDF5.ready(); H5Dclose(id) } }

    public func close() { if id >= 0 { HDF5.ready(); H5Dclose(id); id = -1 } }

    /// Refuses a dataset whose data lives in other files: HDF5's external raw storage (any
    /// path, such as a secret of the user's the weights would carry into an exported ONNX)
    /// and virtual datasets (drawn from datasets of other files).
    func checkStorageIsInside() throws {
        HDF5.ready()
        let dcpl = try check(H5Dget_create_plist(id), "cannot read the storage properties")
        defer { H5Pclose(dcpl) }
        let layout = H5Pget_layout(dcpl)
        if layout == H5D_VIRTUAL {
            throw error("a virtual dataset, whose data comes from other files; poseact reads only what a file holds itself")
        }
        guard layout != H5D_LAYOUT_ERROR else { throw error("cannot read the storage layout", hdf5: true) }
        let external = H5Pget_external_count(dcpl)
        if external != 0 {
            throw error("its data is stored in another file (HDF5 external storage); poseact reads only what a file holds itself")
        }
    }

    /// Dimensions ([] for a scalar dataset).
    public func shape() throws -> [Int] {
        HDF5.ready()
        let space = try check(H5Dget_space(id), "cannot read the shape")
        defer { H5Sclose(space) }
        let rank = H5Sget_simple_extent_ndims(space)
        try check(rank, "cannot read the shape")
        var dims = [hsize_t](repeating: 0, count: Int(rank))
        if rank > 0 { try check(H5Sget_simple_extent_dims(space, &dims, nil), "cannot read the shape") }
        return dims.map { Int($0) }
    }

    /// Whether the stored elements are floating point or integers (both convert to `T`).
    public func isNumeric() throws -> Bool {
        HDF5.ready()
        let type = try check(H5Dget_type(id), "cannot read the type")
        defer { H5Tclose(type) }
        let cls = H5Tget_class(type)
        return cls == H5T_FLOAT || cls == H5T_INTEGER
    }

    /// Whether the dataset has a shape: false for HDF5's null dataspace (no elements, not even one).
    public func hasShape() throws -> Bool {
        HDF5.ready()
        let space = try check(H5Dget_space(id), "cannot read the shape")
        defer { H5Sclose(space) }
        return H5Sget_simple_extent_type(space) != H5S_NULL
    }

    /// Whether the elements are floats of at most 32 bits (a copy keeps them as float32;
    /// float64 and integers are kept as float64, which holds every value a reader converts).
    public func isSinglePrecision() throws -> Bool {
        HDF5.ready()
        let type = try check(H5Dget_type(id), "cannot read the type")
        defer { H5Tclose(type) }
        return H5Tget_class(type) == H5T_FLOAT && H5Tget_size(type) <= 4
    }

    /// The stored element type's size in bytes (4 for float32).
    public func elementSize() throws -> Int {
        HDF5.ready()
        let type = try check(H5Dget_type(id), "cannot read the type")
        defer { H5Tclose(type) }
        return H5Tget_size(type)
    }

    /// The storage filters ("shuffle", "deflate", …), empty for contiguous storage.
    public func filters() throws -> [String] {
        HDF5.ready()
        let dcpl = try check(H5Dget_create_plist(id), "cannot read the storage properties")
        defer { H5Pclose(dcpl) }
        let n = H5Pget_nfilters(dcpl)
        try check(n, "cannot read the filters")
        var names: [String] = []
        for i in 0..<UInt32(n) {
            var flags: UInt32 = 0, nelements = 0
            var cdValues = [UInt32](repeating: 0, count: 8)
            var nameBuffer = [CChar](repeating: 0, count: 64)
            var config: UInt32 = 0
            nelements = cdValues.count
            let filter = H5Pget_filter2(dcpl, i, &flags, &nelements, &cdValues, nameBuffer.count, &nameBuffer, &config)
            switch filter {
            case H5Z_filter_t(H5Z_FILTER_DEFLATE): names.append("deflate")
            case H5Z_filter_t(H5Z_FILTER_SHUFFLE): names.append("shuffle")
            default: names.append(String(cString: nameBuffer))
            }
        }
        return names
    }

    /// The element count of `shape`, refused before anything is allocated when the file
    /// cannot hold that many: a damaged or hostile header declaring 2e9 elements in a 1 MB
    /// file. Deflate packs at most ~1,030 to 1, so compressed data may declare that much more.
    func checkedCount(_ shape: [Int]) throws -> Int {
        var count = 1
        for d in shape {
            let (p, overflow) = count.multipliedReportingOverflow(by: d)
            guard d >= 0, !overflow else { throw error("shape \(shape) is too large (damaged file?)") }
            count = p
        }
        let stored = Int(H5Dget_storage_size(id))
        let (declared, overflow) = count.multipliedReportingOverflow(by: max(1, try elementSize()))
        let limit = stored.multipliedReportingOverflow(by: try filters().isEmpty ? 1 : 1100).partialValue + 4096
        guard !overflow, declared <= limit else {
            throw error("shape \(shape) needs \(declared) bytes but the file stores \(stored) for it (damaged file?)")
        }
        return count
    }

    public func read<T: HDF5Numeric>(as: T.Type = T.self) throws -> (values: [T], shape: [Int]) {
        HDF5.ready()
        guard try isNumeric() else { throw error("not a numeric dataset") }
        let shape = try shape()
        let count = try checkedCount(shape)
        var values = [T](repeating: T.hdf5Zero, count: count)
        if count > 0 {
            _ = try values.withUnsafeMutableBytes { buffer in
                try check(H5Dread(id, T.hdf5MemoryType, HDF5.S_ALL, HDF5.S_ALL, HDF5.P_DEFAULT, buffer.baseAddress),
                          "cannot read the data (damaged file?)")
            }
        }
        return (values, shape)
    }
}

/// The names an HDF5 iteration reports, gathered through its opaque `op_data` pointer.
final class NameList { var names: [String] = [] }

/// The body of the C iteration callbacks: append `name` to the NameList behind `data`.
func appendName(_ name: UnsafePointer<CChar>?, to data: UnsafeMutableRawPointer?) -> herr_t {
    guard let name, let data else { return 0 }
    Unmanaged<NameList>.fromOpaque(data).takeUnretainedValue().names.append(String(cString: name))
    return 0
}

extension HDF5File {
    /// Writes a new file at `path` as an `AtomicFile`: `body` fills its root group, then the
    /// file is closed and given its name. On any error `path` is left as it was.
    public static func writeAtomically(_ path: String, _ body: (HDF5Group) throws -> Void) throws {
        try AtomicFile.write(to: path) { temporaryPath in
            let file = try HDF5File.create(temporaryPath, shownAs: path)
            do {
                let root = try file.root()
                defer { root.close() }
                try body(root)
            } catch {
                try? file.close()
                throw error
            }
            try file.close()
        }
    }
}
