// Which paths this CPU runs, and the one switch from a path to its functions.
#include "Internal.h"

#if defined(__x86_64__)
#include <cpuid.h>

/// The register state the OS saves on a context switch (XCR0): without it, using the
/// registers would corrupt them across threads even where CPUID lists the instructions.
static unsigned long long xcr0(void) {
    unsigned int eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return ((unsigned long long)edx << 32) | eax;
}

int pa_path_supported(pa_path path) {
    if (path == PA_PATH_PORTABLE) return 1;
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
    if (!osxsave || !avx || !fma) return 0;
    unsigned long long xcr = xcr0();
    if ((xcr & 0x6) != 0x6) return 0;                       // SSE and AVX state
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    int avx2 = (b >> 5) & 1;
    if (path == PA_PATH_AVX2) return avx2;
    int f = (b >> 16) & 1, dq = (b >> 17) & 1, bw = (b >> 30) & 1, vl = (b >> 31) & 1;
    return path == PA_PATH_AVX512 && avx2 && f && dq && bw && vl
        && (xcr & 0xE0) == 0xE0;                            // opmask and the upper ZMM state
}
#else
int pa_path_supported(pa_path path) { return path == PA_PATH_PORTABLE; }
#endif

long pa_gemm_tile_rows(pa_path path) {
    switch (path) {
#if defined(__x86_64__)
    case PA_PATH_AVX512: return 12;
    case PA_PATH_AVX2: return 6;
#endif
    default: return 3;
    }
}

long pa_gemm_tile_panels(pa_path path) {
    return path == PA_PATH_AVX512 ? 2 : 1;
}

void pa_packed_gemm(pa_path path, const float *a, long lda, long rows, const pa_packed_weights *w,
                    long panel_begin, long panel_end, float *out, long ldo, float lo, float hi) {
    switch (path) {
#if defined(__x86_64__)
    case PA_PATH_AVX512: pa_packed_gemm_avx512(a, lda, rows, w, panel_begin, panel_end, out, ldo, lo, hi); return;
    case PA_PATH_AVX2: pa_packed_gemm_avx2(a, lda, rows, w, panel_begin, panel_end, out, ldo, lo, hi); return;
#endif
    default: pa_packed_gemm_portable(a, lda, rows, w, panel_begin, panel_end, out, ldo, lo, hi); return;
    }
}

void pa_conv_rows(pa_path path, const pa_window *w, const long *koff, const pa_packed_weights *pw, float *output,
                  long row_begin, long row_end, float lo, float hi, float *scratch) {
    switch (path) {
#if defined(__x86_64__)
    case PA_PATH_AVX512: pa_conv_rows_avx512(w, koff, pw, output, row_begin, row_end, lo, hi, scratch); return;
    case PA_PATH_AVX2: pa_conv_rows_avx2(w, koff, pw, output, row_begin, row_end, lo, hi, scratch); return;
#endif
    default: pa_conv_rows_portable(w, koff, pw, output, row_begin, row_end, lo, hi, scratch); return;
    }
}

void pa_narrow_conv_rows(pa_path path, const pa_window *w, const float *filter, const float *bias, long cout,
                         float *output, long row_begin, long row_end, float lo, float hi) {
    switch (path) {
#if defined(__x86_64__)
    case PA_PATH_AVX512: pa_narrow_conv_rows_avx512(w, filter, bias, cout, output, row_begin, row_end, lo, hi); return;
    case PA_PATH_AVX2: pa_narrow_conv_rows_avx2(w, filter, bias, cout, output, row_begin, row_end, lo, hi); return;
#endif
    default: pa_narrow_conv_rows_portable(w, filter, bias, cout, output, row_begin, row_end, lo, hi); return;
    }
}

void pa_depthwise_rows(pa_path path, const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end) {
    switch (path) {
#if defined(__x86_64__)
    case PA_PATH_AVX512: pa_depthwise_rows_avx512(d, row_begin, row_end, c_begin, c_end); return;
    case PA_PATH_AVX2: pa_depthwise_rows_avx2(d, row_begin, row_end, c_begin, c_end); return;
#endif
    default: pa_depthwise_rows_portable(d, row_begin, row_end, c_begin, c_end); return;
    }
}
