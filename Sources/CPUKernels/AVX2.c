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

static void depthwise_rows_avx2(const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end) {
    long c8 = c_begin + (c_end - c_begin) / 8 * 8;
    for (long row = row_begin; row < row_end; row++) {
        dw_row_avx2(d, row, c_begin, c8);
        pa_dw_row_scalar(d, row, c8, c_end);
    }
}

const pa_kernel_table pa_kernels_avx2 = {
    .gemm_tile_rows = GEMM_MR, .gemm_tile_panels = GEMM_NP,
    .packed_gemm = packed_gemm_avx2, .conv_rows = conv_rows_avx2,
    .narrow_conv_rows = narrow_rows_avx2, .depthwise_rows = depthwise_rows_avx2,
    .resize_rows = resize_rows_avx2,
    .peak_fp32 = peak_fp32_avx2,
    .gemm_atb = gemm_atb_avx2,
};

#pragma clang attribute pop
#endif
