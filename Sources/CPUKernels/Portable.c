// The portable path: 128-bit vectors, which the baseline of x86-64 (SSE2) and of ARM64
// (NEON) both have, so this file needs no target attribute.
#include "Internal.h"

#define VW 4
#define SUF(x) x##_portable
#define GEMM_MR 3
#define GEMM_MR2 2
#define GEMM_NP 1
#include "KernelTemplate.h"

static void depthwise_rows_portable(const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end) {
    long c4 = c_begin + (c_end - c_begin) / 4 * 4;
    for (long row = row_begin; row < row_end; row++) {
        dw_row_portable(d, row, c_begin, c4);
        pa_dw_row_scalar(d, row, c4, c_end);
    }
}

const pa_kernel_table pa_kernels_portable = {
    .gemm_tile_rows = GEMM_MR, .gemm_tile_panels = GEMM_NP,
    .packed_gemm = packed_gemm_portable, .conv_rows = conv_rows_portable,
    .narrow_conv_rows = narrow_rows_portable, .depthwise_rows = depthwise_rows_portable,
    .resize_rows = resize_rows_portable,
    .peak_fp32 = peak_fp32_portable,
    .gemm_atb = gemm_atb_portable,
};

void pa_dw_row_scalar(const pa_depthwise *d, long row, long c_begin, long c_end) {
    if (c_end <= c_begin) return;
    const long C = d->c, b = row / d->oh, oy = row % d->oh;
    const long iy0 = oy * d->stride_h - d->pad_top;
    const float *image = d->input + b * d->ih * d->iw * C;
    for (long ox = 0; ox < d->ow; ox++) {
        const long ix0 = ox * d->stride_w - d->pad_left;
        float *out = d->output + (row * d->ow + ox) * C;
        for (long c = c_begin; c < c_end; c++) {
            float acc = d->bias[c];
            for (long ky = 0; ky < d->kh; ky++) {
                long iy = iy0 + ky * d->dilation_h;
                if (iy < 0 || iy >= d->ih) continue;
                for (long kx = 0; kx < d->kw; kx++) {
                    long ix = ix0 + kx * d->dilation_w;
                    if (ix < 0 || ix >= d->iw) continue;
                    acc += image[(iy * d->iw + ix) * C + c] * d->filter[(ky * d->kw + kx) * C + c];
                }
            }
            out[c] = acc < d->lo ? d->lo : acc > d->hi ? d->hi : acc;
        }
    }
}
