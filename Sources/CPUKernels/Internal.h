// What the path files share, not part of the API.
#ifndef CPU_KERNELS_INTERNAL_H
#define CPU_KERNELS_INTERNAL_H
#include "CPUKernels.h"

/// Channels [c_begin, c_end) of one depthwise output row, one float at a time: the
/// channels left over after the last whole vector.
void pa_dw_row_scalar(const pa_depthwise *d, long row, long c_begin, long c_end);

/// Output columns [*first, *last] of `w` whose filter lies inside the input horizontally
/// (they read the input in place; the others need the padding). *last < *first when none.
static inline void pa_inside_columns(const pa_window *w, long *first, long *last) {
    const long sw = w->stride_w;
    *first = (w->pad_left + sw - 1) / sw;
    if (*first > w->ow) *first = w->ow;
    const long limit = w->iw - 1 - (w->kw - 1) * w->dilation_w + w->pad_left;
    *last = limit >= 0 ? limit / sw : -1;
    if (*last > w->ow - 1) *last = w->ow - 1;
}

/// One path's kernels: each path file defines one table, and CPUKernels.c picks it.
typedef struct {
    long gemm_tile_rows, gemm_tile_panels;
    void (*packed_gemm)(const float *a, long lda, long rows, const pa_packed_weights *w,
                        long panel_begin, long panel_end, float *out, const float *residual, long ldo, float lo, float hi);
    void (*conv_rows)(const pa_window *w, const long *koff, const pa_packed_weights *pw, float *output,
                      const float *residual, long row_begin, long row_end, float lo, float hi, float *scratch);
    void (*narrow_conv_rows)(const pa_window *w, const float *filter, const float *bias, long cout,
                             float *output, const float *residual, long row_begin, long row_end, float lo, float hi);
    void (*depthwise_rows)(const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end);
    void (*gemm_atb)(const float *a, long lda, const float *b, long ldb, long rows, long groups,
                     long gsa, long gsb, long m, float *c, long ldc, long col_begin, long col_end);
    void (*resize_rows)(const pa_resize *r, long row_begin, long row_end);
    double (*peak_fp32)(long iterations);
} pa_kernel_table;

extern const pa_kernel_table pa_kernels_portable;
#if defined(__x86_64__)
extern const pa_kernel_table pa_kernels_avx2;
extern const pa_kernel_table pa_kernels_avx512;
extern const pa_kernel_table pa_kernels_avx512_bf16;
/// VDPBF16PS's limit (AVX512BF16.c).
double pa_peak_bf16(long iterations);
#elif defined(__aarch64__)
extern const pa_kernel_table pa_kernels_neon_bf16;
/// BFDOT's limit (NEONBF16.c).
double pa_peak_bf16_neon(long iterations);
#endif

#endif
