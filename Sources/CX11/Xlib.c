#include "CX11.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static PoseactXlib xlib;
static const PoseactXlib *loaded;
static char failure[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libX11.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
#define POSEACT_XLIB(name)                                                          \
    if (!(xlib.name = (__typeof__(xlib.name))dlsym(library, #name))) {              \
        snprintf(failure, sizeof failure, "libX11.so.6 has no " #name);             \
        return;                                                                     \
    }
    POSEACT_XLIB(XBlackPixel) POSEACT_XLIB(XCloseDisplay) POSEACT_XLIB(XCreateGC)
    POSEACT_XLIB(XCreateImage) POSEACT_XLIB(XCreateSimpleWindow) POSEACT_XLIB(XDefaultDepth)
    POSEACT_XLIB(XDefaultScreen) POSEACT_XLIB(XDefaultVisual) POSEACT_XLIB(XDestroyWindow)
    POSEACT_XLIB(XFlush) POSEACT_XLIB(XFree) POSEACT_XLIB(XFreeGC) POSEACT_XLIB(XGetImage)
    POSEACT_XLIB(XInternAtom) POSEACT_XLIB(XLookupKeysym) POSEACT_XLIB(XMapWindow)
    POSEACT_XLIB(XNextEvent) POSEACT_XLIB(XOpenDisplay) POSEACT_XLIB(XPending)
    POSEACT_XLIB(XPutImage) POSEACT_XLIB(XResizeWindow) POSEACT_XLIB(XRootWindow)
    POSEACT_XLIB(XSelectInput) POSEACT_XLIB(XSetWMProtocols) POSEACT_XLIB(XStoreName)
    POSEACT_XLIB(XSync)
#undef POSEACT_XLIB
    loaded = &xlib;
}

const PoseactXlib *poseact_xlib_load(const char **error) {
    pthread_once(&once, load);
    *error = loaded ? NULL : failure;
    return loaded;
}
