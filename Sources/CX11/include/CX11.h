// Xlib for `live --window`, opened only when a window is asked for: libX11 is loaded at run
// time (dlopen), so the binary runs on a headless server that has no X11 libraries at all.
// The headers come from Debian's libx11-dev at build time; nothing of X11 is linked.
#ifndef POSEACT_CX11_H
#define POSEACT_CX11_H
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>

/// The Xlib functions poseact calls, each the library's own entry point.
typedef struct {
    __typeof__(XBlackPixel) *_Nonnull XBlackPixel;
    __typeof__(XCloseDisplay) *_Nonnull XCloseDisplay;
    __typeof__(XCreateGC) *_Nonnull XCreateGC;
    __typeof__(XCreateImage) *_Nonnull XCreateImage;
    __typeof__(XCreateSimpleWindow) *_Nonnull XCreateSimpleWindow;
    __typeof__(XDefaultDepth) *_Nonnull XDefaultDepth;
    __typeof__(XDefaultScreen) *_Nonnull XDefaultScreen;
    __typeof__(XDefaultVisual) *_Nonnull XDefaultVisual;
    __typeof__(XDestroyWindow) *_Nonnull XDestroyWindow;
    __typeof__(XFlush) *_Nonnull XFlush;
    __typeof__(XFree) *_Nonnull XFree;
    __typeof__(XFreeGC) *_Nonnull XFreeGC;
    __typeof__(XGetImage) *_Nonnull XGetImage;
    __typeof__(XInternAtom) *_Nonnull XInternAtom;
    __typeof__(XLookupKeysym) *_Nonnull XLookupKeysym;
    __typeof__(XMapWindow) *_Nonnull XMapWindow;
    __typeof__(XNextEvent) *_Nonnull XNextEvent;
    __typeof__(XOpenDisplay) *_Nonnull XOpenDisplay;
    __typeof__(XPending) *_Nonnull XPending;
    __typeof__(XPutImage) *_Nonnull XPutImage;
    __typeof__(XResizeWindow) *_Nonnull XResizeWindow;
    __typeof__(XRootWindow) *_Nonnull XRootWindow;
    __typeof__(XSelectInput) *_Nonnull XSelectInput;
    __typeof__(XSetWMProtocols) *_Nonnull XSetWMProtocols;
    __typeof__(XStoreName) *_Nonnull XStoreName;
    __typeof__(XSync) *_Nonnull XSync;
} PoseactXlib;

/// Loads libX11.so.6 once (thread-safe) and returns its functions, or NULL with `*error` set
/// to what went wrong (the loader's own words).
const PoseactXlib *_Nullable poseact_xlib_load(const char *_Nullable *_Nonnull error);

#endif
