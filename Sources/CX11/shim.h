// Xlib, for `live --window` (Debian: libx11-dev).
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>
