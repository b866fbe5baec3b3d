// Linked into the aarch64 package's binary only (package.sh --arch aarch64), never into a
// build from source. The aarch64 Swift runtime comes from Debian's swiftlang 6.2, whose
// static archives were compiled against glibc 2.41 and call eight functions that glibc added
// in 2.38. Defined here, on top of what glibc 2.36 has, the binary links against Debian 12's
// C library and runs on glibc 2.36 and newer (Debian 12, Raspberry Pi OS 12, Ubuntu 24.04)
// instead of 2.38 and newer. Where C23 changed behaviour (a "0b" prefix read as binary by
// strtol with base 0 or 2, and by sscanf's %i), these take the older reading: the runtime
// parses decimal and hexadecimal text only. Compiled against glibc 2.36's headers (the
// sysroot's), where strtol and vsscanf are the older functions themselves, not these names.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long __isoc23_strtol(const char *s, char **end, int base) { return strtol(s, end, base); }
long long __isoc23_strtoll(const char *s, char **end, int base) { return strtoll(s, end, base); }
unsigned long __isoc23_strtoul(const char *s, char **end, int base) { return strtoul(s, end, base); }
unsigned long long __isoc23_strtoull(const char *s, char **end, int base) { return strtoull(s, end, base); }

int __isoc23_sscanf(const char *s, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int n = vsscanf(s, format, arguments);
    va_end(arguments);
    return n;
}

int __isoc23_vsscanf(const char *s, const char *format, va_list arguments) { return vsscanf(s, format, arguments); }

size_t strlcpy(char *restrict destination, const char *restrict source, size_t size) {
    size_t length = strlen(source);
    if (size > 0) {
        size_t n = length < size - 1 ? length : size - 1;
        memcpy(destination, source, n);
        destination[n] = '\0';
    }
    return length;
}

size_t strlcat(char *restrict destination, const char *restrict source, size_t size) {
    size_t used = strnlen(destination, size);
    if (used == size) return size + strlen(source);
    return used + strlcpy(destination + used, source, size - used);
}
