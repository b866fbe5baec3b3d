// The AVX2 + FMA path: 8 floats a vector, 16 registers (a 6 × 16 GEMM tile: twelve
// accumulators, two weight vectors, one broadcast).
#if defined(__x86_64__)
#include "Internal.h"

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

#define VW 8
#define SUF(x) x##_avx2
#define GEMM_MR 6
#define GEMM_MR2 3
#define GEMM_NP 1
#include "KernelTemplate.h"

void pa_packed_gemm_avx2(const float *a, long lda, long rows, const pa_packed_weights *w,
                         long panel_begin, long panel_end, float *out, long ldo, float lo, float hi) {
    packed_gemm_avx2(a, lda, rows, w, panel_begin, panel_end, out, ldo, lo, hi);
}

void pa_conv_rows_avx2(const pa_window *w, const long *koff, const pa_packed_weights *pw, float *output,
                  long row_begin, long row_end, float lo, float hi, float *scratch) {
    conv_rows_avx2(w, koff, pw, output, row_begin, row_end, lo, hi, scratch);
}

void pa_narrow_conv_rows_avx2(const pa_window *w, const float *filter, const float *bias, long cout,
                         float *output, long row_begin, long row_end, float lo, float hi) {
    for (long row = row_begin; row < row_end; row++) narrow_row_avx2(w, filter, bias, cout, output, row, lo, hi);
}

void pa_depthwise_rows_avx2(const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end) {
    long c8 = c_begin + (c_end - c_begin) / 8 * 8;
    for (long row = row_begin; row < row_end; row++) {
        dw_row_avx2(d, row, c_begin, c8);
        pa_dw_row_scalar(d, row, c8, c_end);
    }
}

#pragma clang attribute pop
#endif
