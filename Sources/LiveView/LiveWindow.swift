import CX11
import Foundation
import Images

/// `live --window`: a native window (plain Xlib) showing each overlay frame as it comes.
/// All calls must come from one thread (the live loop's). Closing the window, or pressing
/// q or Esc in it, sets `closed`.
public final class LiveWindow {
    private let x: PoseactXlib
    private let display: OpaquePointer
    private let window: Window
    private let deleteAtom: Atom
    private var image: UnsafeMutablePointer<XImage>?
    private var buffer: UnsafeMutablePointer<UInt32>?
    private var size = (width: 0, height: 0)
    private let gc: GC
    /// The user closed the window (or pressed q / Esc in it).
    public private(set) var closed = false

    /// Opens a window on `display` (nil: $DISPLAY); throws one line when there is none.
    public init(title: String, width: Int, height: Int, display name: String? = nil) throws {
        var failure: UnsafePointer<CChar>?
        guard let xlib = poseact_xlib_load(&failure) else {
            throw ViewError("--window: libX11 cannot be loaded (\(failure.map { String(cString: $0) } ?? "unknown")): install it (Debian/Ubuntu: libx11-6), or use --serve PORT for a browser page")
        }
        let x = xlib.pointee
        self.x = x
        guard let display = x.XOpenDisplay(name) else {
            let which = name ?? ProcessInfo.processInfo.environment["DISPLAY"]
            throw ViewError(which.map { "--window: cannot open the display \($0): is the X server running and may this user use it?" }
                ?? "--window: no display ($DISPLAY is not set): run it on a desktop, or use --serve PORT for a browser page")
        }
        self.display = display
        let screen = x.XDefaultScreen(display)
        let visual = x.XDefaultVisual(display, screen)
        guard x.XDefaultDepth(display, screen) >= 24, let visual, visual.pointee.`class` == TrueColor else {
            _ = x.XCloseDisplay(display)
            throw ViewError("--window: the display has no 24-bit true-colour visual; use --serve PORT for a browser page")
        }
        window = x.XCreateSimpleWindow(display, x.XRootWindow(display, screen), 0, 0, UInt32(max(width, 1)), UInt32(max(height, 1)), 0,
                                     x.XBlackPixel(display, screen), x.XBlackPixel(display, screen))
        _ = x.XStoreName(display, window, title)
        _ = x.XSelectInput(display, window, Int(ExposureMask | KeyPressMask | StructureNotifyMask))
        var delete = x.XInternAtom(display, "WM_DELETE_WINDOW", 0)
        deleteAtom = delete
        _ = x.XSetWMProtocols(display, window, &delete, 1)
        guard let gc = x.XCreateGC(display, window, 0, nil) else {
            _ = x.XDestroyWindow(display, window)
            _ = x.XCloseDisplay(display)
            throw ViewError("--window: the X server would not make a graphics context; use --serve PORT for a browser page")
        }
        self.gc = gc
        _ = x.XMapWindow(display, window)
        // Wait (up to 2 s) until the window is on screen, so that the first frame shows.
        let deadline = Date().addingTimeInterval(2)
        var mapped = false
        while !mapped && Date() < deadline {
            while x.XPending(display) > 0 {
                var event = XEvent()
                _ = x.XNextEvent(display, &event)
                if event.type == MapNotify { mapped = true }
            }
            if !mapped { usleep(5_000) }
        }
    }

    deinit {
        releaseImage()
        _ = x.XFreeGC(display, gc)
        _ = x.XDestroyWindow(display, window)
        _ = x.XCloseDisplay(display)
    }

    /// Shows `picture` (the window takes its size) and handles pending window events.
    public func show(_ picture: RGBImage) {
        pollEvents()
        if closed { return }
        if size != (picture.width, picture.height) {
            releaseImage()
            let screen = x.XDefaultScreen(display)
            buffer = UnsafeMutablePointer<UInt32>.allocate(capacity: picture.width * picture.height)
            image = x.XCreateImage(display, x.XDefaultVisual(display, screen), UInt32(x.XDefaultDepth(display, screen)), ZPixmap, 0,
                                 UnsafeMutableRawPointer(buffer!).assumingMemoryBound(to: CChar.self),
                                 UInt32(picture.width), UInt32(picture.height), 32, Int32(picture.width * 4))
            size = (picture.width, picture.height)
            _ = x.XResizeWindow(display, window, UInt32(picture.width), UInt32(picture.height))
        }
        guard let image, let buffer else { return }
        let shifts = (shift(image.pointee.red_mask), shift(image.pointee.green_mask), shift(image.pointee.blue_mask))
        let bigEndian = image.pointee.byte_order == MSBFirst
        picture.pixels.withUnsafeBufferPointer { rgb in
            for i in 0..<(picture.width * picture.height) {
                let v = UInt32(rgb[3 * i]) << shifts.0 | UInt32(rgb[3 * i + 1]) << shifts.1 | UInt32(rgb[3 * i + 2]) << shifts.2
                buffer[i] = bigEndian ? v.bigEndian : v.littleEndian
            }
        }
        redraw()
    }

    /// Handles pending events (close, keys, exposure); call it while waiting too.
    public func pollEvents() {
        while x.XPending(display) > 0 {
            var event = XEvent()
            _ = x.XNextEvent(display, &event)
            switch event.type {
            case ClientMessage:
                if Atom(event.xclient.data.l.0) == deleteAtom { closed = true }
            case KeyPress:
                let key = x.XLookupKeysym(&event.xkey, 0)
                if key == KeySym(XK_q) || key == KeySym(XK_Escape) { closed = true }
            case Expose:
                if event.xexpose.count == 0 { redraw() }
            default:
                break
            }
        }
    }

    /// What the window shows now, read back from the X server (for tests).
    public func screenshot() -> RGBImage? {
        _ = x.XSync(display, 0)
        guard size.width > 0, let shot = x.XGetImage(display, window, 0, 0, UInt32(size.width), UInt32(size.height), UInt.max, ZPixmap)
        else { return nil }
        defer { _ = x.XFree(shot.pointee.data); _ = x.XFree(shot) }
        var out = RGBImage(width: size.width, height: size.height)
        let shifts = (shift(shot.pointee.red_mask), shift(shot.pointee.green_mask), shift(shot.pointee.blue_mask))
        let stride = Int(shot.pointee.bytes_per_line), bigEndian = shot.pointee.byte_order == MSBFirst
        guard shot.pointee.bits_per_pixel == 32 else { return nil }
        let base = UnsafeRawPointer(shot.pointee.data!)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let raw = base.loadUnaligned(fromByteOffset: y * stride + 4 * x, as: UInt32.self)
                let v = bigEndian ? UInt32(bigEndian: raw) : UInt32(littleEndian: raw)
                let i = 3 * (y * size.width + x)
                out.pixels[i] = UInt8((v >> shifts.0) & 255)
                out.pixels[i + 1] = UInt8((v >> shifts.1) & 255)
                out.pixels[i + 2] = UInt8((v >> shifts.2) & 255)
            }
        }
        return out
    }

    private func redraw() {
        guard let image else { return }
        _ = x.XPutImage(display, window, gc, image, 0, 0, 0, 0, UInt32(size.width), UInt32(size.height))
        _ = x.XFlush(display)
    }

    private func shift(_ mask: UInt) -> UInt32 { UInt32(mask.trailingZeroBitCount) }

    private func releaseImage() {
        if let image {
            image.pointee.data = nil   // the pixels are ours: XFree frees only the XImage
            _ = x.XFree(image)
        }
        image = nil
        buffer?.deallocate()
        buffer = nil
        size = (0, 0)
    }
}
