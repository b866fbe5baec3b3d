// The ARM64 path with bfloat16 products (FEAT_BF16: Neoverse V1, V2 and N2, so Graviton 3
// and 4; Cortex-A510, A710 and later; Apple M2 and later): a convolution whose weights were
// also packed in bfloat16 (pa_pack_bf16, the layout the AVX-512 bfloat16 path reads)
// multiplies with BFDOT, which adds two bfloat16 products into each FP32 lane: eight
// multiply-adds a 128-bit instruction, where FP32's FMLA does four. The activations are
// rounded to bfloat16 a block of rows at a time, just before the product; everything else
// (accumulation, bias, residual, clamp, the tensors between layers, the depthwise layers) stays
// FP32. Every other kernel is the portable path's.
//
// Why not FP16: FMLAL (FEAT_FHM) widens half-precision products into FP32 sums but does four
// a 128-bit instruction, as many as FP32's FMLA, so it saves no arithmetic; and FP16 FMLA,
// eight a vector, which the Raspberry Pi 5's Cortex-A76 has, sums in FP16 (docs/engine.md).
#if defined(__aarch64__)
#include "Internal.h"
#include <arm_neon.h>
#include <stddef.h>

#pragma clang attribute push(__attribute__((target("bf16"))), apply_to = function)

#define NB_INLINE static inline __attribute__((always_inline))
#define NB_UNROLL _Pragma("clang loop unroll(full)")
// Rows of the main tile: 6 rows × 16 channels are 24 accumulators, beside the panel's 4
// weight vectors and a broadcast pair, in the 32 registers. NB_MR2 for the last rows.
#define NB_MR 6
#define NB_MR2 2
// Bytes of activations rounded to bfloat16 at a time: a block of rows that stays in L1
// while every panel of weights passes over it.
#define NB_BLOCK_BYTES (32 * 1024)

/// Eight floats rounded to bfloat16 (BFCVTN, in FPCR's rounding mode: to nearest, ties to
/// even, as pa_pack_bf16 rounds the weights).
NB_INLINE uint16x8_t nb_round8(const float *x) {
    return vreinterpretq_u16_bf16(vcvtq_high_bf16_f32(vcvtq_low_bf16_f32(vld1q_f32(x)), vld1q_f32(x + 4)));
}

/// A row of k floats as (k + 1) / 2 pairs of bfloat16, the last pair's second value zero
/// when k is odd. Writes exactly those values: the rows of a block lie end to end.
NB_INLINE void nb_row(const float *x, long k, unsigned short *out) {
    long i = 0;
    for (; i + 8 <= k; i += 8) vst1q_u16(out + i, nb_round8(x + i));
    if (i == k) return;
    float rest[8] = {0};
    for (long j = 0; i + j < k; j++) rest[j] = x[i + j];
    unsigned short rounded[8];
    vst1q_u16(rounded, nb_round8(rest));
    for (long j = 0; i + j < (k + 1) / 2 * 2; j++) out[i + j] = rounded[j];
}

/// Eight bfloat16s (four channels' pairs of one panel).
NB_INLINE bfloat16x8_t nb_load(const unsigned short *p) { return vreinterpretq_bf16_u16(vld1q_u16(p)); }

/// One pair of a row in every 32-bit lane (memcpy: the buffer's values are unsigned shorts).
NB_INLINE bfloat16x8_t nb_broadcast(const unsigned short *p) {
    uint32_t pair;
    __builtin_memcpy(&pair, p, sizeof pair);
    return vreinterpretq_bf16_u32(vdupq_n_u32(pair));
}

/// Stores the first `count` (at least 1) floats of clamp(v + residual).
NB_INLINE void nb_store(float *p, float32x4_t v, long count, float32x4_t lo, float32x4_t hi, const float *res) {
    if (count >= 4) {
        if (res) v = vaddq_f32(v, vld1q_f32(res));
        vst1q_f32(p, vminnmq_f32(vmaxnmq_f32(v, lo), hi));
        return;
    }
    float part[4] = {0, 0, 0, 0};
    if (res) {
        for (long i = 0; i < count; i++) part[i] = res[i];
        v = vaddq_f32(v, vld1q_f32(part));
    }
    vst1q_f32(part, vminnmq_f32(vmaxnmq_f32(v, lo), hi));
    for (long i = 0; i < count; i++) p[i] = part[i];
}

/// An MR × (4 · NV) block of the output from MR rows of bfloat16 pairs (row stride lda
/// values) and one panel of bfloat16 weights: each BFDOT adds a pair of K's products into four
/// channels of one row. NV is 4 but for a layer's last panel, whose vectors past its last
/// channel it skips; `width` is the valid channels from the block's first column.
#define NB_TILE(MR, NV)                                                                                \
NB_INLINE void nb_tile_##MR##x##NV(const unsigned short *a, long lda, long kp, const unsigned short *w, \
                                   const float *bias, float *out, const float *res, long ldo, long width, \
                                   float32x4_t lo, float32x4_t hi) {                                  \
    float32x4_t acc[MR][NV];                                                                           \
    NB_UNROLL for (int j = 0; j < NV; j++) {                                                           \
        const float32x4_t b = vld1q_f32(bias + 4 * j);                                                 \
        NB_UNROLL for (int r = 0; r < MR; r++) acc[r][j] = b;                                          \
    }                                                                                                  \
    for (long q = 0; q < kp; q++) {                                                                    \
        bfloat16x8_t wv[NV];                                                                           \
        NB_UNROLL for (int j = 0; j < NV; j++) wv[j] = nb_load(w + q * 32 + 8 * j);                    \
        NB_UNROLL for (int r = 0; r < MR; r++) {                                                       \
            const bfloat16x8_t x = nb_broadcast(a + r * lda + 2 * q);                                  \
            NB_UNROLL for (int j = 0; j < NV; j++) acc[r][j] = vbfdotq_f32(acc[r][j], wv[j], x);       \
        }                                                                                              \
    }                                                                                                  \
    NB_UNROLL for (int r = 0; r < MR; r++)                                                             \
        NB_UNROLL for (int j = 0; j < NV; j++)                                                         \
            nb_store(out + r * ldo + 4 * j, acc[r][j], width - 4 * j, lo, hi, res ? res + r * ldo + 4 * j : NULL); \
}
#define NB_TILES_OF(MR) NB_TILE(MR, 1) NB_TILE(MR, 2) NB_TILE(MR, 3) NB_TILE(MR, 4)
#define NB_TILES_OF_EXPAND(MR) NB_TILES_OF(MR)
NB_TILES_OF_EXPAND(NB_MR)
NB_TILES_OF_EXPAND(NB_MR2)
NB_TILES_OF(1)

#define NB_CALL(MR, NV) nb_tile_##MR##x##NV(a + r * lda, lda, kp, wp, bp, out + r * ldo + col0,        \
                                            res ? res + r * ldo + col0 : NULL, ldo, width, lo, hi)
#define NB_CALL_EXPAND(MR, NV) NB_CALL(MR, NV)
/// Rows 0..<rows of one panel in MR-, MR2- and 1-row tiles of NV vectors.
#define NB_ROWS(NV)                                                                                    \
    do {                                                                                               \
        long r = 0;                                                                                    \
        for (; r + NB_MR <= rows; r += NB_MR) NB_CALL_EXPAND(NB_MR, NV);                               \
        for (; r + NB_MR2 <= rows; r += NB_MR2) NB_CALL_EXPAND(NB_MR2, NV);                            \
        for (; r < rows; r++) NB_CALL(1, NV);                                                          \
    } while (0)

/// out rows 0..<rows, panels [panel_begin, panel_end), from `rows` rows of bfloat16 pairs
/// (row stride lda values).
static void nb_rows(const unsigned short *a, long lda, long rows, const pa_packed_weights *w, long panel_begin,
                    long panel_end, float *out, const float *res, long ldo, float32x4_t lo, float32x4_t hi) {
    const long kp = (w->k + 1) / 2;
    for (long panel = panel_begin; panel < panel_end; panel++) {
        const unsigned short *wp = w->bf16 + panel * kp * 32;
        const float *bp = w->bias + panel * 16;
        const long col0 = panel * 16, width = w->n - col0;
        switch (width >= 16 ? 4 : (width + 3) / 4) {   // vectors holding a channel
        case 1: NB_ROWS(1); break;
        case 2: NB_ROWS(2); break;
        case 3: NB_ROWS(3); break;
        default: NB_ROWS(4); break;
        }
    }
}

/// Rows of bfloat16 a block holds for K = k (a multiple of the main tile's rows where it
/// can be); 0 when not even one row fits (K beyond 16,384, which the engine never packs).
static long nb_block_rows(long k) {
    long rows = NB_BLOCK_BYTES / ((k + 1) / 2 * 4);
    if (rows >= NB_MR) rows = rows / NB_MR * NB_MR;
    return rows > 8 * NB_MR ? 8 * NB_MR : rows;
}

static void packed_gemm_nbf16(const float *a, long lda, long rows, const pa_packed_weights *w,
                              long panel_begin, long panel_end, float *out, const float *res, long ldo, float lo_, float hi_) {
    const long block = nb_block_rows(w->k);
    if (!w->bf16 || block == 0) {
        pa_kernels_portable.packed_gemm(a, lda, rows, w, panel_begin, panel_end, out, res, ldo, lo_, hi_);
        return;
    }
    const float32x4_t lo = vdupq_n_f32(lo_), hi = vdupq_n_f32(hi_);
    const long stride = (w->k + 1) / 2 * 2;
    unsigned short buf[NB_BLOCK_BYTES / sizeof(unsigned short)];
    for (long start = 0; start < rows; start += block) {
        const long n = rows - start < block ? rows - start : block;
        for (long r = 0; r < n; r++) nb_row(a + (start + r) * lda, w->k, buf + r * stride);
        nb_rows(buf, stride, n, w, panel_begin, panel_end, out + start * ldo, res ? res + start * ldo : NULL, ldo, lo, hi);
    }
}

/// K input values of output pixel x of a row into `scratch`: in place through koff where
/// the window lies inside the input, by im2col at the padding.
static void nb_gather(const pa_window *w, const long *koff, long k, const float *image, long iy0, long row, long x,
                      int inside, float *scratch) {
    if (inside) {
        const float *src = image + (iy0 * w->iw + x * w->stride_w - w->pad_left) * w->c;
        for (long i = 0; i < k; i++) scratch[i] = src[koff[i]];
    } else {
        pa_im2col(w, row * w->ow + x, row * w->ow + x + 1, scratch);
    }
}

/// As the FP32 conv_rows, but each block of output pixels first gathers its K input values
/// a pixel and rounds them to bfloat16 pairs.
static void conv_rows_nbf16(const pa_window *w, const long *koff, const pa_packed_weights *pw, float *output,
                            const float *residual, long row_begin, long row_end, float lo_, float hi_, float *scratch) {
    const long block = nb_block_rows(pw->k);
    if (!pw->bf16 || block == 0) {
        pa_kernels_portable.conv_rows(w, koff, pw, output, residual, row_begin, row_end, lo_, hi_, scratch);
        return;
    }
    const float32x4_t lo = vdupq_n_f32(lo_), hi = vdupq_n_f32(hi_);
    const long K = pw->k, stride = (K + 1) / 2 * 2, N = pw->n;
    long first, last;
    pa_inside_columns(w, &first, &last);
    unsigned short buf[NB_BLOCK_BYTES / sizeof(unsigned short)];
    for (long row = row_begin; row < row_end; row++) {
        const long b = row / w->oh, iy0 = row % w->oh * w->stride_h - w->pad_top;
        const int rowInside = iy0 >= 0 && iy0 + (w->kh - 1) * w->dilation_h < w->ih;
        const float *image = w->input + b * w->ih * w->iw * w->c;
        float *outRow = output + row * w->ow * N;
        const float *resRow = residual ? residual + row * w->ow * N : NULL;
        for (long ox = 0; ox < w->ow; ox += block) {
            const long n = w->ow - ox < block ? w->ow - ox : block;
            for (long p = 0; p < n; p++) {
                const long x = ox + p;
                nb_gather(w, koff, K, image, iy0, row, x, rowInside && x >= first && x <= last, scratch);
                nb_row(scratch, K, buf + p * stride);
            }
            nb_rows(buf, stride, n, pw, 0, pw->panels, outRow + ox * N, resRow ? resRow + ox * N : NULL, N, lo, hi);
        }
    }
}

// The rest is the portable path's (its table is not a constant expression here).
static void narrow_rows_nbf16(const pa_window *w, const float *filter, const float *bias, long cout,
                              float *output, const float *residual, long row_begin, long row_end, float lo, float hi) {
    pa_kernels_portable.narrow_conv_rows(w, filter, bias, cout, output, residual, row_begin, row_end, lo, hi);
}
static void depthwise_rows_nbf16(const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end) {
    pa_kernels_portable.depthwise_rows(d, row_begin, row_end, c_begin, c_end);
}
static void gemm_atb_nbf16(const float *a, long lda, const float *b, long ldb, long rows, long groups,
                           long gsa, long gsb, long m, float *c, long ldc, long col_begin, long col_end) {
    pa_kernels_portable.gemm_atb(a, lda, b, ldb, rows, groups, gsa, gsb, m, c, ldc, col_begin, col_end);
}
static void resize_rows_nbf16(const pa_resize *r, long row_begin, long row_end) {
    pa_kernels_portable.resize_rows(r, row_begin, row_end);
}
static double peak_fp32_nbf16(long iterations) { return pa_kernels_portable.peak_fp32(iterations); }

#define NB_PEAK_ACC 24
/// BFDOT's limit, as the FP32 paths' peak_fp32: 24 independent chains of 128-bit bfloat16
/// dot products, each 4 lanes × 2 products, a multiply and an add each.
double pa_peak_bf16_neon(long iterations) {
    float32x4_t acc[NB_PEAK_ACC];
    NB_UNROLL for (int j = 0; j < NB_PEAK_ACC; j++) acc[j] = vdupq_n_f32((float)j);
    // 0x3A83 is bfloat16 0.001: each round adds 2e-6 to every lane, which stays finite.
    const bfloat16x8_t x = vreinterpretq_bf16_u16(vdupq_n_u16(0x3A83));
    for (long i = 0; i < iterations; i++) {
        NB_UNROLL for (int j = 0; j < NB_PEAK_ACC; j++) acc[j] = vbfdotq_f32(acc[j], x, x);
    }
    float32x4_t sum = acc[0];
    NB_UNROLL for (int j = 1; j < NB_PEAK_ACC; j++) sum = vaddq_f32(sum, acc[j]);
    volatile float sink = vaddvq_f32(sum);
    (void)sink;
    return 2.0 * 8 * NB_PEAK_ACC * (double)iterations;
}

const pa_kernel_table pa_kernels_neon_bf16 = {
    .gemm_tile_rows = NB_MR, .gemm_tile_panels = 1,
    .packed_gemm = packed_gemm_nbf16, .conv_rows = conv_rows_nbf16,
    .narrow_conv_rows = narrow_rows_nbf16, .depthwise_rows = depthwise_rows_nbf16,
    .resize_rows = resize_rows_nbf16,
    .peak_fp32 = peak_fp32_nbf16,
    .gemm_atb = gemm_atb_nbf16,
};

#pragma clang attribute pop
#endif
