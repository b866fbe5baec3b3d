// The AVX-512 path with bfloat16 products: a convolution whose weights were also packed in
// bfloat16 (pa_pack_bf16) multiplies with VDPBF16PS, which takes two bfloat16 pairs a lane
// and adds their products into FP32: twice the multiply-adds of an FP32 FMA a vector. The
// activations are rounded to bfloat16 a block of rows at a time, just before the product;
// everything else (accumulation, bias, residual, clamp, the tensors between layers, the
// depthwise layers) stays FP32. Every other kernel is the AVX-512 path's.
#if defined(__x86_64__)
#include "Internal.h"
#include <immintrin.h>

#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma,avx512bf16"))), apply_to = function)

#define BF_INLINE static inline __attribute__((always_inline))
#define BF_UNROLL _Pragma("clang loop unroll(full)")
// Rows of the main tile (12 × 2 panels: 24 accumulators, 2 weight vectors, 1 broadcast)
// and of the smaller one for the last rows, as on the FP32 AVX-512 path.
#define BF_MR 12
#define BF_MR2 4
// Bytes of activations rounded to bfloat16 at a time: a block of rows that stays in L1
// while every panel of weights passes over it.
#define BF_BLOCK_BYTES (32 * 1024)

typedef unsigned bf_pair;   // two bfloat16s: values 2q and 2q + 1 of a row

/// A row of k floats as (k + 1) / 2 pairs of bfloat16 (to nearest, ties to even), the last
/// pair's second value zero when k is odd.
BF_INLINE void bf_row(const float *x, long k, bf_pair *out) {
    long i = 0;
    for (; i + 32 <= k; i += 32) {
        __m512bh v = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(x + i));
        _mm512_storeu_si512(out + i / 2, (__m512i)v);
    }
    const long rest = k - i;
    if (rest > 0) {
        const __mmask16 lo = rest >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rest) - 1);
        const __mmask16 hi = rest > 16 ? (__mmask16)((1u << (rest - 16)) - 1) : 0;
        __m512bh v = _mm512_cvtne2ps_pbh(_mm512_maskz_loadu_ps(hi, x + i + 16), _mm512_maskz_loadu_ps(lo, x + i));
        const long pairs = (rest + 1) / 2;
        _mm512_mask_storeu_epi32(out + i / 2, (__mmask16)((1u << pairs) - 1), (__m512i)v);
    }
}

/// An MR × (NP · 16) block of the output from MR rows of bfloat16 pairs (row stride lda
/// pairs) and NP panels of bfloat16 weights (wstride values apart): the FP32 tile's shape,
/// with one VDPBF16PS doing two rows of K at once.
#define BF_TILE(MR, NP)                                                                                \
BF_INLINE void bf_tile_##MR##x##NP(const bf_pair *a, long lda, long kp, const unsigned short *w, long wstride, \
                                   const float *bias, float *out, const float *res, long ldo, long width, \
                                   __m512 lo, __m512 hi) {                                            \
    __m512 acc[MR][NP];                                                                                \
    BF_UNROLL for (int j = 0; j < NP; j++) {                                                           \
        const __m512 b = _mm512_loadu_ps(bias + 16 * j);                                               \
        BF_UNROLL for (int r = 0; r < MR; r++) acc[r][j] = b;                                          \
    }                                                                                                  \
    for (long q = 0; q < kp; q++) {                                                                    \
        __m512bh wv[NP];                                                                               \
        BF_UNROLL for (int p = 0; p < NP; p++) wv[p] = (__m512bh)_mm512_loadu_si512(w + p * wstride + q * 32); \
        BF_UNROLL for (int r = 0; r < MR; r++) {                                                       \
            const __m512bh x = (__m512bh)_mm512_set1_epi32((int)a[r * lda + q]);                       \
            BF_UNROLL for (int j = 0; j < NP; j++) acc[r][j] = _mm512_dpbf16_ps(acc[r][j], x, wv[j]);  \
        }                                                                                              \
    }                                                                                                  \
    BF_UNROLL for (int r = 0; r < MR; r++)                                                             \
        BF_UNROLL for (int j = 0; j < NP; j++) {                                                       \
            const long col = 16 * j;                                                                   \
            if (col >= width) continue;                                                                \
            const __mmask16 m = width - col >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (width - col)) - 1); \
            __m512 v = acc[r][j];                                                                      \
            if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, res + r * ldo + col));              \
            _mm512_mask_storeu_ps(out + r * ldo + col, m, _mm512_min_ps(_mm512_max_ps(v, lo), hi));    \
        }                                                                                              \
}
#define BF_TILE_EXPAND(MR, NP) BF_TILE(MR, NP)
BF_TILE_EXPAND(BF_MR, 2)
BF_TILE_EXPAND(BF_MR2, 2)
BF_TILE(1, 2)
BF_TILE_EXPAND(BF_MR, 1)
BF_TILE_EXPAND(BF_MR2, 1)
BF_TILE(1, 1)

/// The same with a half panel: `FULL` whole panels (0 or 1) and then one whose width is at
/// most 8 (a layer of 24, 40 or 88 channels), whose lanes 8–15 the 512-bit tile would compute
/// for nothing: its products take 256-bit VDPBF16PS (8 lanes), which costs half a 512-bit
/// one on a core that splits 512-bit instructions in two (Zen 4).
#define BF_HALF_TILE(MR, FULL)                                                                         \
BF_INLINE void bf_half_tile_##MR##x##FULL(const bf_pair *a, long lda, long kp, const unsigned short *w, long wstride, \
                                          const float *bias, float *out, const float *res, long ldo, long width, \
                                          __m512 lo, __m512 hi) {                                     \
    __m512 acc[MR][FULL > 0 ? FULL : 1];                                                             \
    __m256 half[MR];                                                                                   \
    const __m256 hb = _mm256_loadu_ps(bias + 16 * FULL);                                               \
    BF_UNROLL for (int r = 0; r < MR; r++) {                                                           \
        if (FULL) acc[r][0] = _mm512_loadu_ps(bias);                                                   \
        half[r] = hb;                                                                                  \
    }                                                                                                  \
    for (long q = 0; q < kp; q++) {                                                                    \
        const __m512bh w0 = (__m512bh)_mm512_loadu_si512(w + q * 32);                                 \
        const __m256bh wh = (__m256bh)_mm256_loadu_si256((const __m256i *)(w + FULL * wstride + q * 32)); \
        BF_UNROLL for (int r = 0; r < MR; r++) {                                                       \
            const __m512i x = _mm512_set1_epi32((int)a[r * lda + q]);                                  \
            if (FULL) acc[r][0] = _mm512_dpbf16_ps(acc[r][0], (__m512bh)x, w0);                        \
            half[r] = _mm256_dpbf16_ps(half[r], (__m256bh)_mm512_castsi512_si256(x), wh);              \
        }                                                                                              \
    }                                                                                                  \
    const long hw = width - 16 * FULL;                                                                 \
    const __mmask8 hm = (__mmask8)((1u << hw) - 1);                                                    \
    BF_UNROLL for (int r = 0; r < MR; r++) {                                                           \
        if (FULL) {                                                                                    \
            __m512 v = acc[r][0];                                                                      \
            if (res) v = _mm512_add_ps(v, _mm512_loadu_ps(res + r * ldo));                             \
            _mm512_storeu_ps(out + r * ldo, _mm512_min_ps(_mm512_max_ps(v, lo), hi));                  \
        }                                                                                              \
        __m256 v = half[r];                                                                            \
        if (res) v = _mm256_add_ps(v, _mm256_maskz_loadu_ps(hm, res + r * ldo + 16 * FULL));           \
        v = _mm256_min_ps(_mm256_max_ps(v, _mm512_castps512_ps256(lo)), _mm512_castps512_ps256(hi));   \
        _mm256_mask_storeu_ps(out + r * ldo + 16 * FULL, hm, v);                                       \
    }                                                                                                  \
}
#define BF_HALF_TILE_EXPAND(MR, FULL) BF_HALF_TILE(MR, FULL)
BF_HALF_TILE_EXPAND(BF_MR, 1)
BF_HALF_TILE_EXPAND(BF_MR2, 1)
BF_HALF_TILE(1, 1)
BF_HALF_TILE_EXPAND(BF_MR, 0)
BF_HALF_TILE_EXPAND(BF_MR2, 0)
BF_HALF_TILE(1, 0)

#define BF_TILES(KIND, MR, NP) bf_##KIND##_##MR##x##NP(a + r * lda, lda, kp, wp, wstride, bp, out + r * ldo + col0, \
                                                      res ? res + r * ldo + col0 : NULL, ldo, width, lo, hi)
#define BF_TILES_EXPAND(KIND, MR, NP) BF_TILES(KIND, MR, NP)
/// Rows 0..<rows from `panel` on, in tiles of KIND: tile (NP whole panels) or half_tile (NP
/// whole panels, then a half one).
#define BF_ROWS(KIND, NP)                                                                              \
    do {                                                                                               \
        const unsigned short *wp = w->bf16 + panel * wstride;                                          \
        const float *bp = w->bias + panel * 16;                                                        \
        const long col0 = panel * 16, width = w->n - col0;                                             \
        long r = 0;                                                                                    \
        for (; r + BF_MR <= rows; r += BF_MR) BF_TILES_EXPAND(KIND, BF_MR, NP);                        \
        for (; r + BF_MR2 <= rows; r += BF_MR2) BF_TILES_EXPAND(KIND, BF_MR2, NP);                     \
        for (; r < rows; r++) BF_TILES(KIND, 1, NP);                                                   \
    } while (0)

/// out rows 0..<rows, panels [panel_begin, panel_end), from `rows` rows of bfloat16 pairs.
/// A last panel of at most 8 channels is a half panel, computed with its full neighbour
/// where it has one in the range.
static void bf_rows(const bf_pair *a, long lda, long rows, const pa_packed_weights *w, long panel_begin, long panel_end,
                    float *out, const float *res, long ldo, __m512 lo, __m512 hi) {
    const long kp = (w->k + 1) / 2, wstride = kp * 32;
    const int halfLast = panel_begin < panel_end && panel_end == w->panels && w->n - (w->panels - 1) * 16 <= 8;
    const long whole = halfLast ? panel_end - 1 : panel_end;   // panels of 9 to 16 channels
    long panel = panel_begin;
    for (; panel + 2 <= whole - (halfLast && (whole - panel) % 2 == 1); panel += 2) BF_ROWS(tile, 2);
    if (halfLast && panel + 1 == whole) { BF_ROWS(half_tile, 1); return; }
    for (; panel < whole; panel++) BF_ROWS(tile, 1);
    if (halfLast && panel < panel_end) BF_ROWS(half_tile, 0);
}

/// Rows of bfloat16 pairs a block holds for K = k (a multiple of the main tile's rows where
/// it can be); 0 when not even one row fits (K beyond 16,384, which the engine never packs).
static long bf_block_rows(long k) {
    const long bytes = (k + 1) / 2 * 4;
    long rows = BF_BLOCK_BYTES / bytes;
    if (rows >= BF_MR) rows = rows / BF_MR * BF_MR;
    return rows > 8 * BF_MR ? 8 * BF_MR : rows;
}

static void packed_gemm_bf16(const float *a, long lda, long rows, const pa_packed_weights *w,
                             long panel_begin, long panel_end, float *out, const float *res, long ldo, float lo_, float hi_) {
    const long block = bf_block_rows(w->k);
    if (!w->bf16 || block == 0) {
        pa_kernels_avx512.packed_gemm(a, lda, rows, w, panel_begin, panel_end, out, res, ldo, lo_, hi_);
        return;
    }
    const __m512 lo = _mm512_set1_ps(lo_), hi = _mm512_set1_ps(hi_);
    const long kp = (w->k + 1) / 2;
    bf_pair buf[BF_BLOCK_BYTES / sizeof(bf_pair)];
    for (long start = 0; start < rows; start += block) {
        const long n = rows - start < block ? rows - start : block;
        for (long r = 0; r < n; r++) bf_row(a + (start + r) * lda, w->k, buf + r * kp);
        bf_rows(buf, kp, n, w, panel_begin, panel_end, out + start * ldo, res ? res + start * ldo : NULL, ldo, lo, hi);
    }
}

/// As the FP32 conv_rows, but each block of output pixels first gathers its K input values
/// a pixel (in place through koff where the window lies inside the input, by im2col at the
/// padding, into `scratch`) and rounds them to bfloat16 pairs.
static void conv_rows_bf16(const pa_window *w, const long *koff, const pa_packed_weights *pw, float *output,
                           const float *residual, long row_begin, long row_end, float lo_, float hi_, float *scratch) {
    const long block = bf_block_rows(pw->k);
    if (!pw->bf16 || block == 0) {
        pa_kernels_avx512.conv_rows(w, koff, pw, output, residual, row_begin, row_end, lo_, hi_, scratch);
        return;
    }
    const __m512 lo = _mm512_set1_ps(lo_), hi = _mm512_set1_ps(hi_);
    const long C = w->c, K = pw->k, kp = (K + 1) / 2, N = pw->n, sw = w->stride_w;
    long first, last;
    pa_inside_columns(w, &first, &last);
    bf_pair buf[BF_BLOCK_BYTES / sizeof(bf_pair)];
    for (long row = row_begin; row < row_end; row++) {
        const long b = row / w->oh, oy = row % w->oh;
        const long iy0 = oy * w->stride_h - w->pad_top;
        const int rowInside = iy0 >= 0 && iy0 + (w->kh - 1) * w->dilation_h < w->ih;
        const float *image = w->input + b * w->ih * w->iw * C;
        float *outRow = output + row * w->ow * N;
        const float *resRow = residual ? residual + row * w->ow * N : NULL;
        for (long ox = 0; ox < w->ow; ox += block) {
            const long n = w->ow - ox < block ? w->ow - ox : block;
            for (long p = 0; p < n; p++) {
                const long x = ox + p;
                if (rowInside && x >= first && x <= last) {
                    const float *src = image + (iy0 * w->iw + x * sw - w->pad_left) * C;
                    for (long k = 0; k < K; k++) scratch[k] = src[koff[k]];
                } else {
                    pa_im2col(w, row * w->ow + x, row * w->ow + x + 1, scratch);
                }
                bf_row(scratch, K, buf + p * kp);
            }
            bf_rows(buf, kp, n, pw, 0, pw->panels, outRow + ox * N, resRow ? resRow + ox * N : NULL, N, lo, hi);
        }
    }
}

// The rest is the FP32 AVX-512 path's (its table is not a constant expression here).
static void narrow_rows_bf16(const pa_window *w, const float *filter, const float *bias, long cout,
                             float *output, const float *residual, long row_begin, long row_end, float lo, float hi) {
    pa_kernels_avx512.narrow_conv_rows(w, filter, bias, cout, output, residual, row_begin, row_end, lo, hi);
}
static void depthwise_rows_bf16(const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end) {
    pa_kernels_avx512.depthwise_rows(d, row_begin, row_end, c_begin, c_end);
}
static void gemm_atb_bf16(const float *a, long lda, const float *b, long ldb, long rows, long groups,
                          long gsa, long gsb, long m, float *c, long ldc, long col_begin, long col_end) {
    pa_kernels_avx512.gemm_atb(a, lda, b, ldb, rows, groups, gsa, gsb, m, c, ldc, col_begin, col_end);
}
static void resize_rows_bf16(const pa_resize *r, long row_begin, long row_end) {
    pa_kernels_avx512.resize_rows(r, row_begin, row_end);
}
static double peak_fp32_bf16(long iterations) { return pa_kernels_avx512.peak_fp32(iterations); }

#define PEAK_BF16_ACC 24
/// VDPBF16PS's limit, as the FP32 paths' peak_fp32: 24 independent chains of 512-bit
/// bfloat16 dot products, each 16 lanes × 2 products, a multiply and an add each.
double pa_peak_bf16(long iterations) {
    __m512 acc[PEAK_BF16_ACC];
    BF_UNROLL for (int j = 0; j < PEAK_BF16_ACC; j++) acc[j] = _mm512_set1_ps((float)j);
    // 0x3A83 is bfloat16 0.001: each round adds 2e-6 to every lane, which stays finite.
    const __m512bh x = (__m512bh)_mm512_set1_epi16(0x3A83);
    for (long i = 0; i < iterations; i++) {
        BF_UNROLL for (int j = 0; j < PEAK_BF16_ACC; j++) acc[j] = _mm512_dpbf16_ps(acc[j], x, x);
    }
    __m512 sum = acc[0];
    BF_UNROLL for (int j = 1; j < PEAK_BF16_ACC; j++) sum = _mm512_add_ps(sum, acc[j]);
    volatile float sink = _mm512_reduce_add_ps(sum);
    (void)sink;
    return 2.0 * 32 * PEAK_BF16_ACC * (double)iterations;
}

const pa_kernel_table pa_kernels_avx512_bf16 = {
    .gemm_tile_rows = BF_MR, .gemm_tile_panels = 2,
    .packed_gemm = packed_gemm_bf16, .conv_rows = conv_rows_bf16,
    .narrow_conv_rows = narrow_rows_bf16, .depthwise_rows = depthwise_rows_bf16,
    .resize_rows = resize_rows_bf16,
    .peak_fp32 = peak_fp32_bf16,
    .gemm_atb = gemm_atb_bf16,
};

#pragma clang attribute pop
#endif
