import CX11
import Foundation
import Images
import Media

/// `live --window`: a native window (plain Xlib) showing each overlay frame as it comes.
/// All calls must come from one thread (the live loop's). Closing the window, or pressing
/// q or Esc in it, sets `closed`.
public final class LiveWindow {
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
        guard let display = XOpenDisplay(name) else {
            let which = name ?? ProcessInfo.processInfo.environment["DISPLAY"]
            throw ViewError(which.map { "--window: cannot open the display \($0): is the X server running and may this user use it?" }
                ?? "--window: no display ($DISPLAY is not set): run it on a desktop, or use --serve PORT for a browser page")
        }
        self.display = display
        let screen = XDefaultScreen(display)
        let visual = XDefaultVisual(display, screen)
        guard XDefaultDepth(display, screen) >= 24, let visual, visual.pointee.`class` == TrueColor else {
            XCloseDisplay(display)
            throw ViewError("--window: the display has no 24-bit true-colour visual; use --serve PORT for a browser page")
        }
        window = XCreateSimpleWindow(display, XRootWindow(display, screen), 0, 0, UInt32(max(width, 1)), UInt32(max(height, 1)), 0,
                                     XBlackPixel(display, screen), XBlackPixel(display, screen))
        XStoreName(display, window, title)
        XSelectInput(display, window, Int(ExposureMask | KeyPressMask | StructureNotifyMask))
        var delete = XInternAtom(display, "WM_DELETE_WINDOW", 0)
        deleteAtom = delete
        XSetWMProtocols(display, window, &delete, 1)
        gc = XCreateGC(display, window, 0, nil)
        XMapWindow(display, window)
        // Wait (up to 2 s) until the window is on screen, so that the first frame shows.
        let deadline = Date().addingTimeInterval(2)
        var mapped = false
        while !mapped && Date() < deadline {
            while XPending(display) > 0 {
                var event = XEvent()
                XNextEvent(display, &event)
                if event.type == MapNotify { mapped = true }
            }
            if !mapped { usleep(5_000) }
        }
    }

    deinit {
        releaseImage()
        XFreeGC(display, gc)
        XDestroyWindow(display, window)
        XCloseDisplay(display)
    }

    /// Shows `picture` (the window takes its size) and handles pending window events.
    public func show(_ picture: RGBImage) {
        pollEvents()
        if closed { return }
        if size != (picture.width, picture.height) {
            releaseImage()
            let screen = XDefaultScreen(display)
            buffer = UnsafeMutablePointer<UInt32>.allocate(capacity: picture.width * picture.height)
            image = XCreateImage(display, XDefaultVisual(display, screen), UInt32(XDefaultDepth(display, screen)), ZPixmap, 0,
                                 UnsafeMutableRawPointer(buffer!).assumingMemoryBound(to: CChar.self),
                                 UInt32(picture.width), UInt32(picture.height), 32, Int32(picture.width * 4))
            size = (picture.width, picture.height)
            XResizeWindow(display, window, UInt32(picture.width), UInt32(picture.height))
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
        while XPending(display) > 0 {
            var event = XEvent()
            XNextEvent(display, &event)
            switch event.type {
            case ClientMessage:
                if Atom(event.xclient.data.l.0) == deleteAtom { closed = true }
            case KeyPress:
                let key = XLookupKeysym(&event.xkey, 0)
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
        XSync(display, 0)
        guard size.width > 0, let shot = XGetImage(display, window, 0, 0, UInt32(size.width), UInt32(size.height), UInt.max, ZPixmap)
        else { return nil }
        defer { XFree(shot.pointee.data); XFree(shot) }
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
        XPutImage(display, window, gc, image, 0, 0, 0, 0, UInt32(size.width), UInt32(size.height))
        XFlush(display)
    }

    private func shift(_ mask: UInt) -> UInt32 { UInt32(mask.trailingZeroBitCount) }

    private func releaseImage() {
        if let image {
            image.pointee.data = nil   // the pixels are ours: XFree frees only the XImage
            XFree(image)
        }
        image = nil
        buffer?.deallocate()
        buffer = nil
        size = (0, 0)
    }
}
