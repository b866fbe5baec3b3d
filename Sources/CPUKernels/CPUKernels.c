// Which paths this CPU runs, and the one switch from a path to its table of functions.
#include "Internal.h"
#include <string.h>

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
    int avx512 = avx2 && f && dq && bw && vl && (xcr & 0xE0) == 0xE0;   // opmask and the upper ZMM state
    if (path == PA_PATH_AVX512) return avx512;
    if (path != PA_PATH_AVX512_BF16 || !avx512) return 0;
    if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) return 0;
    return (a >> 5) & 1;                                    // AVX512_BF16
}
#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1UL << 14)   // Linux's bit for FEAT_BF16, for C library headers older than it
#endif

/// The kernel lists in AT_HWCAP2 what it lets user code run: the CPU's ID registers, less
/// what the kernel does not save or support.
int pa_path_supported(pa_path path) {
    if (path == PA_PATH_PORTABLE) return 1;
    if (path == PA_PATH_NEON_BF16) return (getauxval(AT_HWCAP2) & HWCAP2_BF16) != 0;
    return 0;
}
#else
int pa_path_supported(pa_path path) { return path == PA_PATH_PORTABLE; }
#endif

static const pa_kernel_table *table(pa_path path) {
    switch (path) {
#if defined(__x86_64__)
    case PA_PATH_AVX512: return &pa_kernels_avx512;
    case PA_PATH_AVX512_BF16: return &pa_kernels_avx512_bf16;
    case PA_PATH_AVX2: return &pa_kernels_avx2;
#elif defined(__aarch64__)
    case PA_PATH_NEON_BF16: return &pa_kernels_neon_bf16;
#endif
    default: return &pa_kernels_portable;
    }
}

long pa_gemm_tile_rows(pa_path path) { return table(path)->gemm_tile_rows; }

long pa_gemm_tile_panels(pa_path path) { return table(path)->gemm_tile_panels; }

void pa_packed_gemm(pa_path path, const float *a, long lda, long rows, const pa_packed_weights *w,
                    long panel_begin, long panel_end, float *out, const float *residual, long ldo, float lo, float hi) {
    table(path)->packed_gemm(a, lda, rows, w, panel_begin, panel_end, out, residual, ldo, lo, hi);
}

void pa_conv_rows(pa_path path, const pa_window *w, const long *koff, const pa_packed_weights *pw, float *output,
                  const float *residual, long row_begin, long row_end, float lo, float hi, float *scratch) {
    table(path)->conv_rows(w, koff, pw, output, residual, row_begin, row_end, lo, hi, scratch);
}

void pa_narrow_conv_rows(pa_path path, const pa_window *w, const float *filter, const float *bias, long cout,
                         float *output, const float *residual, long row_begin, long row_end, float lo, float hi) {
    table(path)->narrow_conv_rows(w, filter, bias, cout, output, residual, row_begin, row_end, lo, hi);
}

void pa_gemm_atb(pa_path path, const float *a, long lda, const float *b, long ldb, long rows, long groups,
                 long gsa, long gsb, long m, float *c, long ldc, long col_begin, long col_end) {
    table(path)->gemm_atb(a, lda, b, ldb, rows, groups, gsa, gsb, m, c, ldc, col_begin, col_end);
}

void pa_depthwise_rows(pa_path path, const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end) {
    table(path)->depthwise_rows(d, row_begin, row_end, c_begin, c_end);
}

void pa_resize_rows(pa_path path, const pa_resize *r, long row_begin, long row_end) {
    table(path)->resize_rows(r, row_begin, row_end);
}

double pa_peak_flops(pa_path path, pa_peak_kind kind, long iterations) {
    if (kind == PA_PEAK_FP32) return table(path)->peak_fp32(iterations);
#if defined(__x86_64__)
    if (kind == PA_PEAK_BF16 && path == PA_PATH_AVX512_BF16) return pa_peak_bf16(iterations);
#elif defined(__aarch64__)
    if (kind == PA_PEAK_BF16 && path == PA_PATH_NEON_BF16) return pa_peak_bf16_neon(iterations);
#endif
    return 0;
}

long pa_bf16_count(const pa_packed_weights *w) { return w->panels * ((w->k + 1) / 2) * 32; }

/// x rounded to bfloat16, to nearest with ties to even (a NaN stays a NaN), as VCVTNE2PS2BF16.
static unsigned short bf16_of(float x) {
    unsigned u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)((u >> 16) | 0x40);
    u += 0x7FFFu + ((u >> 16) & 1);
    return (unsigned short)(u >> 16);
}

void pa_pack_bf16(const pa_packed_weights *w, unsigned short *out) {
    const long kp = (w->k + 1) / 2;
    for (long p = 0; p < w->panels; p++) {
        const float *panel = w->data + p * w->k * 16;
        unsigned short *dst = out + p * kp * 32;
        for (long q = 0; q < kp; q++)
            for (long lane = 0; lane < 16; lane++) {
                dst[q * 32 + 2 * lane] = bf16_of(panel[2 * q * 16 + lane]);
                dst[q * 32 + 2 * lane + 1] = 2 * q + 1 < w->k ? bf16_of(panel[(2 * q + 1) * 16 + lane]) : 0;
            }
    }
}
