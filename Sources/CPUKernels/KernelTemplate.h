// One source for every path's kernels: the includer defines
//   VW          floats per vector (16, 8 or 4)
//   SUF(name)   the name with the path's suffix
//   GEMM_MR     rows of the main GEMM tile, GEMM_MR2 of the smaller one for the last rows
//   GEMM_NP     16-wide weight panels of the main GEMM tile (1 or 2)
// and pushes the path's target attribute, so that clang compiles the same vector
// arithmetic to AVX-512, AVX2 or SSE2/NEON instructions. `acc += x * w` is one fused
// multiply-add where the target has FMA (clang contracts within an expression).
//
// No include guard: included once per path and width.

#include <stddef.h>
#include "CPUKernels.h"

typedef float SUF(vf) __attribute__((vector_size(VW * 4)));
#define V SUF(vf)
#ifndef DW_PIXELS
#define DW_PIXELS 4   // neighbouring pixels a depthwise group sums at once (8 where there are 32 registers)
#endif
#define PA_INLINE static inline __attribute__((always_inline))

PA_INLINE V SUF(load)(const float *p) { V v; __builtin_memcpy(&v, p, sizeof v); return v; }
PA_INLINE void SUF(store)(float *p, V v) { __builtin_memcpy(p, &v, sizeof v); }
PA_INLINE V SUF(splat)(float x) {   // not (V){} + x: that adds 0.0 (−0.0 + 0.0 is +0.0) before broadcasting
    V v;
    for (int i = 0; i < VW; i++) v[i] = x;
    return v;
}
PA_INLINE V SUF(clamp)(V v, V lo, V hi) { return __builtin_elementwise_min(__builtin_elementwise_max(v, lo), hi); }

/// The first `count` floats at p (count ≤ VW), zeros after: a masked load where the path
/// has one (PA_LOAD_FIRST(p, count)), else element by element.
PA_INLINE V SUF(load_part)(const float *p, long count) {
    if (count >= VW) return SUF(load)(p);
#ifdef PA_LOAD_FIRST
    return PA_LOAD_FIRST(p, count);
#else
    V v = {};
    for (long i = 0; i < count; i++) v[i] = p[i];
    return v;
#endif
}

/// Stores the first `count` floats of v (count ≤ VW): a masked store where the path has one
/// (PA_STORE_FIRST(p, v, count)), else element by element.
PA_INLINE void SUF(store_first)(float *p, V v, long count) {
    if (count >= VW) { SUF(store)(p, v); return; }
#ifdef PA_STORE_FIRST
    PA_STORE_FIRST(p, v, count);
#else
    for (long i = 0; i < count; i++) p[i] = v[i];
#endif
}

/// Stores the first `count` floats of clamp(v + residual) (`residual` NULL when the layer has none).
PA_INLINE void SUF(store_part)(float *p, V v, long count, V lo, V hi, const float *residual) {
    if (residual) v += SUF(load_part)(residual, count);
    SUF(store_first)(p, SUF(clamp)(v, lo, hi), count);
}

// ---- GEMM on packed weights --------------------------------------------------------------

#define NV (16 / VW)   // vectors per 16-wide panel
// The accumulators stay in registers only if every loop over them is unrolled: one
// loop left rolled indexes the array at run time and sends it to the stack.
#define PA_UNROLL _Pragma("clang loop unroll(full)")

/// An MR × (NP · 16) block of the output: MR · NP · NV accumulators live in registers
/// across the whole K loop; each k loads NP · NV weight vectors and broadcasts MR values
/// of A. `width` is the number of valid output channels from the block's first column.
/// Row r's k-th value of A is a[r · lda + k] for `tile_`, and a[r · lda + koff[k]] for
/// `ctile_`: a convolution read straight from its NHWC input (see conv_rows).
#define TILE_FUNCTION(NAME, MR, NP, AT)                                                                \
PA_INLINE void SUF(NAME)(const float *a, long lda, const long *koff, long k, const float *w, long wstride, \
                         const float *bias, float *out, const float *res, long ldo, long width, V lo, V hi) { \
    (void)koff;                                                                                        \
    V acc[MR][NP * NV];                                                                                \
    PA_UNROLL for (int j = 0; j < NP * NV; j++) {                                                      \
        V b = SUF(load)(bias + j * VW);                                                                \
        PA_UNROLL for (int r = 0; r < MR; r++) acc[r][j] = b;                                          \
    }                                                                                                  \
    for (long kk = 0; kk < k; kk++) {                                                                  \
        V wv[NP * NV];                                                                                 \
        PA_UNROLL for (int p = 0; p < NP; p++)                                                         \
            PA_UNROLL for (int v = 0; v < NV; v++) wv[p * NV + v] = SUF(load)(w + p * wstride + kk * 16 + v * VW); \
        const float *ak = a + AT;                                                                      \
        PA_UNROLL for (int r = 0; r < MR; r++) {                                                       \
            V x = SUF(splat)(ak[r * lda]);                                                             \
            PA_UNROLL for (int j = 0; j < NP * NV; j++) acc[r][j] += x * wv[j];                        \
        }                                                                                              \
    }                                                                                                  \
    PA_UNROLL for (int r = 0; r < MR; r++)                                                             \
        PA_UNROLL for (int j = 0; j < NP * NV; j++) {                                                  \
            long col = j * VW;                                                                         \
            if (col < width)                                                                           \
                SUF(store_part)(out + r * ldo + col, acc[r][j], width - col, lo, hi, res ? res + r * ldo + col : NULL); \
        }                                                                                              \
}
#define DEFINE_TILE(MR, NP) DEFINE_TILE_(MR, NP)
#define DEFINE_TILE_(MR, NP)                                                                           \
    TILE_FUNCTION(tile_##MR##x##NP, MR, NP, kk)                                                        \
    TILE_FUNCTION(ctile_##MR##x##NP, MR, NP, koff[kk])

DEFINE_TILE(GEMM_MR, GEMM_NP)
DEFINE_TILE(GEMM_MR2, GEMM_NP)
DEFINE_TILE(1, GEMM_NP)
#if GEMM_NP > 1
DEFINE_TILE(GEMM_MR, 1)
DEFINE_TILE(GEMM_MR2, 1)
DEFINE_TILE(1, 1)
#endif

#if VW == 16
// A last panel of at most 8 channels (layers of 8, 24, 40, 88 channels) would compute lanes
// 8–15 for nothing: it takes 8-wide vectors instead, after FULL (0 or 1) whole panels. On a
// core that splits 512-bit instructions in two (Zen 4) an 8-wide FMA costs half a 16-wide one.
typedef float SUF(vh) __attribute__((vector_size(32)));
#define VH SUF(vh)
PA_INLINE VH SUF(hload)(const float *p) { VH v; __builtin_memcpy(&v, p, sizeof v); return v; }
PA_INLINE VH SUF(hsplat)(float x) {
    VH v;
    for (int i = 0; i < 8; i++) v[i] = x;
    return v;
}
/// Stores the first `count` (≤ 8) floats of clamp(v + residual).
PA_INLINE void SUF(hstore_part)(float *p, VH v, long count, VH lo, VH hi, const float *residual) {
    const __mmask8 m = (__mmask8)((1u << count) - 1);
    if (residual) v += (VH)_mm256_maskz_loadu_ps(m, residual);
    _mm256_mask_storeu_ps(p, m, (__m256)__builtin_elementwise_min(__builtin_elementwise_max(v, lo), hi));
}

#define HALF_TILE_FUNCTION(NAME, MR, FULL, AT)                                                         \
PA_INLINE void SUF(NAME)(const float *a, long lda, const long *koff, long k, const float *w, long wstride, \
                         const float *bias, float *out, const float *res, long ldo, long width, V lo, V hi) { \
    (void)koff;                                                                                        \
    V acc[MR];                                                                                         \
    VH half[MR];                                                                                       \
    const V b = SUF(load)(bias);                                                                       \
    const VH hb = SUF(hload)(bias + 16 * FULL);                                                        \
    PA_UNROLL for (int r = 0; r < MR; r++) { acc[r] = b; half[r] = hb; }                               \
    for (long kk = 0; kk < k; kk++) {                                                                  \
        const V wv = FULL ? SUF(load)(w + kk * 16) : b;                                                \
        const VH wh = SUF(hload)(w + FULL * wstride + kk * 16);                                        \
        const float *ak = a + AT;                                                                      \
        PA_UNROLL for (int r = 0; r < MR; r++) {                                                       \
            const float x = ak[r * lda];                                                               \
            if (FULL) acc[r] += SUF(splat)(x) * wv;                                                    \
            half[r] += SUF(hsplat)(x) * wh;                                                            \
        }                                                                                              \
    }                                                                                                  \
    const VH hlo = __builtin_shufflevector(lo, lo, 0, 1, 2, 3, 4, 5, 6, 7);                            \
    const VH hhi = __builtin_shufflevector(hi, hi, 0, 1, 2, 3, 4, 5, 6, 7);                            \
    PA_UNROLL for (int r = 0; r < MR; r++) {                                                           \
        if (FULL) SUF(store_part)(out + r * ldo, acc[r], 16, lo, hi, res ? res + r * ldo : NULL);      \
        SUF(hstore_part)(out + r * ldo + 16 * FULL, half[r], width - 16 * FULL, hlo, hhi,              \
                         res ? res + r * ldo + 16 * FULL : NULL);                                      \
    }                                                                                                  \
}
#define DEFINE_HALF_TILE(MR, FULL) DEFINE_HALF_TILE_(MR, FULL)
#define DEFINE_HALF_TILE_(MR, FULL)                                                                    \
    HALF_TILE_FUNCTION(htile_##MR##x##FULL, MR, FULL, kk)                                              \
    HALF_TILE_FUNCTION(hctile_##MR##x##FULL, MR, FULL, koff[kk])
DEFINE_HALF_TILE(GEMM_MR, 1)
DEFINE_HALF_TILE(GEMM_MR2, 1)
DEFINE_HALF_TILE(1, 1)
DEFINE_HALF_TILE(GEMM_MR, 0)
DEFINE_HALF_TILE(GEMM_MR2, 0)
DEFINE_HALF_TILE(1, 0)

/// Panels [begin, end) of `total` (n channels): TWO(2) for pairs of whole panels, ONE(1) for
/// one, and where the last panel is at most 8 channels wide, HALF(1) for it with the whole
/// panel before it or HALF(0) alone. `panel` is the loop variable the statements read.
#define FOR_PANELS(begin, end, total, n, TWO, ONE, HALF1, HALF0)                                       \
    do {                                                                                               \
        const int halfLast_ = (begin) < (end) && (end) == (total) && (n) - ((total) - 1) * 16 <= 8;    \
        const long whole_ = halfLast_ ? (end) - 1 : (end);                                             \
        panel = (begin);                                                                               \
        for (; panel + 2 <= whole_ - (halfLast_ && (whole_ - panel) % 2 == 1); panel += 2) TWO;        \
        if (halfLast_ && panel + 1 == whole_) { HALF1; }                                               \
        else {                                                                                         \
            for (; panel < whole_; panel++) ONE;                                                       \
            if (halfLast_) HALF0;                                                                      \
        }                                                                                              \
    } while (0)
#else
#if GEMM_NP > 1
#define FOR_PANELS(begin, end, total, n, TWO, ONE, HALF1, HALF0)                                       \
    do {                                                                                               \
        panel = (begin);                                                                               \
        for (; panel + 2 <= (end); panel += 2) TWO;                                                    \
        for (; panel < (end); panel++) ONE;                                                            \
    } while (0)
#else
#define FOR_PANELS(begin, end, total, n, TWO, ONE, HALF1, HALF0)                                       \
    do { for (panel = (begin); panel < (end); panel++) ONE; } while (0)
#endif
#endif

/// Rows start..<end from `panel` on, in MR-, MR2- and 1-row tiles of KIND: tile (NP whole
/// panels) or htile (NP whole panels, then a half one).
#define GEMM_ROWS(KIND, NP, MR, MR2)                                                                   \
    do {                                                                                               \
        const float *wp = w->data + panel * w->k * 16, *bp = w->bias + panel * 16;                     \
        long col0 = panel * 16, width = w->n - col0;                                                   \
        long r = start;                                                                                \
        for (; r + MR <= end; r += MR)                                                                 \
            SUF(KIND##_##MR##x##NP)(a + r * lda, lda, NULL, w->k, wp, w->k * 16, bp, out + r * ldo + col0, res ? res + r * ldo + col0 : NULL, ldo, width, lo, hi); \
        for (; r + MR2 <= end; r += MR2)                                                               \
            SUF(KIND##_##MR2##x##NP)(a + r * lda, lda, NULL, w->k, wp, w->k * 16, bp, out + r * ldo + col0, res ? res + r * ldo + col0 : NULL, ldo, width, lo, hi); \
        for (; r < end; r++)                                                                           \
            SUF(KIND##_1x##NP)(a + r * lda, lda, NULL, w->k, wp, w->k * 16, bp, out + r * ldo + col0, res ? res + r * ldo + col0 : NULL, ldo, width, lo, hi); \
    } while (0)

#define GEMM_ROWS_EXPAND(KIND, NP, MR, MR2) GEMM_ROWS(KIND, NP, MR, MR2)

static inline void SUF(packed_gemm)(const float *a, long lda, long rows, const pa_packed_weights *w,
                             long panel_begin, long panel_end, float *out, const float *res, long ldo,
                                    float lo_, float hi_) {
    V lo = SUF(splat)(lo_), hi = SUF(splat)(hi_);
    // Rows in chunks whose block of A stays in L2 while every panel passes over it.
    long chunk = (48 * 1024) / (w->k * 4 > 0 ? w->k * 4 : 1) / GEMM_MR * GEMM_MR;
    if (chunk < GEMM_MR) chunk = GEMM_MR;
    if (chunk > 8 * GEMM_MR) chunk = 8 * GEMM_MR;
    for (long start = 0; start < rows; start += chunk) {
        long end = start + chunk < rows ? start + chunk : rows;
        long panel;
        FOR_PANELS(panel_begin, panel_end, w->panels, w->n, GEMM_ROWS_EXPAND(tile, 2, GEMM_MR, GEMM_MR2),
                   GEMM_ROWS_EXPAND(tile, 1, GEMM_MR, GEMM_MR2), GEMM_ROWS_EXPAND(htile, 1, GEMM_MR, GEMM_MR2),
                   GEMM_ROWS_EXPAND(htile, 0, GEMM_MR, GEMM_MR2));
    }
}

// ---- Convolution straight from the input ---------------------------------------------------

/// Output rows [row_begin, row_end) (of n · oh) of a convolution on packed weights, with
/// no im2col buffer: along an output row whose windows lie inside the input, pixel r of a
/// tile starts r · stride_w · c floats after the first, and its value k sits koff[k]
/// further (koff: the filter's taps as offsets into the NHWC input). Pixels at the padding
/// are gathered one at a time into `scratch` (K floats).
#define CONV_TILES(KIND, MR, NP)                                                                       \
    do {                                                                                               \
        const float *wp = pw->data + panel * K * 16, *bp = pw->bias + panel * 16;                      \
        SUF(KIND##_##MR##x##NP)(src, lda, koff, K, wp, K * 16, bp, out + panel * 16, res ? res + panel * 16 : NULL, N,  \
                                N - panel * 16, lo, hi);                                               \
    } while (0)
#define CONV_PIXELS(MR) CONV_PIXELS_(MR)
#define CONV_PIXELS_(MR)                                                                               \
    do {                                                                                               \
        const float *src = image + (iy0 * w->iw + ox * sw - w->pad_left) * C;                          \
        float *out = outRow + ox * N;                                                                  \
        const float *res = resRow ? resRow + ox * N : NULL;                                            \
        long panel;                                                                                    \
        FOR_PANELS(0, pw->panels, pw->panels, N, CONV_TILES_EXPAND(ctile, MR, 2), CONV_TILES(ctile, MR, 1), \
                   CONV_TILES(hctile, MR, 1), CONV_TILES(hctile, MR, 0));                              \
        ox += MR;                                                                                      \
    } while (0)
#define CONV_TILES_EXPAND(KIND, MR, NP) CONV_TILES(KIND, MR, NP)
#define EDGE_TILE(KIND, NP)                                                                            \
    do {                                                                                               \
        const float *wp = pw->data + panel * K * 16, *bp = pw->bias + panel * 16;                      \
        SUF(KIND##_1x##NP)(scratch, K, NULL, K, wp, K * 16, bp, out + panel * 16, res ? res + panel * 16 : NULL, N, \
                           N - panel * 16, lo, hi);                                                    \
    } while (0)

static inline void SUF(conv_rows)(const pa_window *w, const long *koff, const pa_packed_weights *pw, float *output,
                                  const float *residual, long row_begin, long row_end, float lo_, float hi_,
                                  float *scratch) {
    const V lo = SUF(splat)(lo_), hi = SUF(splat)(hi_);
    const long C = w->c, K = pw->k, N = pw->n, sw = w->stride_w, lda = sw * C;
    long first, last;
    pa_inside_columns(w, &first, &last);
    for (long row = row_begin; row < row_end; row++) {
        const long b = row / w->oh, oy = row % w->oh;
        const long iy0 = oy * w->stride_h - w->pad_top;
        const int rowInside = iy0 >= 0 && iy0 + (w->kh - 1) * w->dilation_h < w->ih;
        const float *image = w->input + b * w->ih * w->iw * C;
        float *outRow = output + row * w->ow * N;
        const float *resRow = residual ? residual + row * w->ow * N : NULL;
        for (long ox = 0; ox < w->ow;) {
            if (rowInside && ox >= first && ox + GEMM_MR - 1 <= last) { CONV_PIXELS(GEMM_MR); continue; }
            if (rowInside && ox >= first && ox + GEMM_MR2 - 1 <= last) { CONV_PIXELS(GEMM_MR2); continue; }
            if (rowInside && ox >= first && ox <= last) { CONV_PIXELS(1); continue; }
            pa_im2col(w, row * w->ow + ox, row * w->ow + ox + 1, scratch);
            float *out = outRow + ox * N;
            const float *res = resRow ? resRow + ox * N : NULL;
            long panel;
            FOR_PANELS(0, pw->panels, pw->panels, N, EDGE_TILE(tile, 2), EDGE_TILE(tile, 1), EDGE_TILE(htile, 1), EDGE_TILE(htile, 0));
            ox += 1;
        }
    }
}

// ---- Depthwise convolution ---------------------------------------------------------------

/// P neighbouring output pixels of one vector of channels, summed over the taps ky in
/// [ky0, ky1) and kx in [0, kw): pixel j's input under tap (ky, kx) is at
/// src + ky · rowStride + kx · tapStride + j · step. Each weight vector is loaded once for
/// all P pixels, and P independent sums keep the FMA unit busy across its latency.
PA_INLINE void SUF(dw_pixels)(const int P, const float *src, long rowStride, long tapStride, long step,
                              const float *filter, long C, long ky0, long ky1, long kw, V bias, V lo, V hi,
                              float *out) {
    V a[DW_PIXELS];
    PA_UNROLL for (int j = 0; j < P; j++) a[j] = bias;
    for (long ky = ky0; ky < ky1; ky++)
        for (long kx = 0; kx < kw; kx++) {
            const V wv = SUF(load)(filter + (ky * kw + kx) * C);
            const float *s = src + ky * rowStride + kx * tapStride;
            PA_UNROLL for (int j = 0; j < P; j++) a[j] += SUF(load)(s + j * step) * wv;
        }
    PA_UNROLL for (int j = 0; j < P; j++) SUF(store)(out + j * C, SUF(clamp)(a[j], lo, hi));
}

/// Channels [c_begin, c_end) of one output row, a vector at a time (c_end − c_begin is a
/// multiple of VW), over the taps ky in [ky0, ky1) (those inside the input on this row).
/// P (then four) neighbouring pixels whose windows lie inside the input horizontally share
/// each weight load; the pixels at the left and right edges sum over their own range of kx.
PA_INLINE void SUF(dw_row_taps)(const pa_depthwise *d, long row, long c_begin, long c_end, const long kh, const long kw,
                                const long ky0, const long ky1, const int unitX) {
    (void)kh;
    // unitX: stride and dilation 1 along x, as constants, so that the pixels' loads of
    // one input vector under neighbouring taps are recognised as one load.
    const long sw = unitX ? 1 : d->stride_w, dw = unitX ? 1 : d->dilation_w;
    const long C = d->c, iw = d->iw, ow = d->ow, dh = d->dilation_h;
    const long b = row / d->oh, oy = row % d->oh;
    const long iy0 = oy * d->stride_h - d->pad_top;
    // Output columns [first, last] whose window lies inside the input horizontally.
    long first = (d->pad_left + sw - 1) / sw;
    if (first > ow) first = ow;
    const long limit = iw - 1 - (kw - 1) * dw + d->pad_left;
    long last = limit >= 0 ? limit / sw : -1;
    if (last > ow - 1) last = ow - 1;
    const float *image = d->input + b * d->ih * iw * C;
    float *outRow = d->output + row * ow * C;
    const V lo = SUF(splat)(d->lo), hi = SUF(splat)(d->hi);
    // Pixels a group: DW_PIXELS along rows of stride 1, whose neighbours share input loads;
    // four at stride 2, where eight took 1.1–1.4× the time of four (more loads than registers).
    const int P = unitX ? DW_PIXELS : 4;

    // Narrow rows under a 5-wide filter (the 7- to 28-pixel layers) have nearly as many edge
    // pixels as inner ones: there the taps' input rows, one vector of channels wide, are first
    // copied into a buffer with zeros for the padding, so that every pixel takes the
    // grouped path. (Under a 3-wide filter the copy costs more than it saves.)
    const long bw = (ow - 1) * sw + (kw - 1) * dw + 1;   // buffer width, pixels
    if (ow <= 28 && bw <= 64 && kh <= 5 && kw >= 5) {
        V buf[5 * 64];
        for (long c = c_begin; c < c_end; c += VW) {
            const V bias = SUF(load)(d->bias + c);
            const float *filter = d->filter + c;
            for (long ky = ky0; ky < ky1; ky++) {
                const float *in = image + (iy0 + ky * dh) * iw * C + c;
                V *dst = buf + ky * bw;
                for (long px = 0; px < bw; px++) {
                    const long ix = px - d->pad_left;
                    dst[px] = ix >= 0 && ix < iw ? SUF(load)(in + ix * C) : (V){};
                }
            }
            // Pixel p of buffer row ky is VW floats a pixel from the buffer's start.
            const float *base = (const float *)buf;
            long ox = 0;
            for (; ox + P <= ow; ox += P)
                SUF(dw_pixels)(P, base + ox * sw * VW, bw * VW, dw * VW, sw * VW, filter, C, ky0, ky1, kw,
                               bias, lo, hi, outRow + ox * C + c);
            for (; ox + 4 <= ow; ox += 4)
                SUF(dw_pixels)(4, base + ox * sw * VW, bw * VW, dw * VW, sw * VW, filter, C, ky0, ky1, kw,
                               bias, lo, hi, outRow + ox * C + c);
            for (; ox < ow; ox++)
                SUF(dw_pixels)(1, base + ox * sw * VW, bw * VW, dw * VW, sw * VW, filter, C, ky0, ky1, kw,
                               bias, lo, hi, outRow + ox * C + c);
        }
        return;
    }
    for (long c = c_begin; c < c_end; c += VW) {
        const V bias = SUF(load)(d->bias + c);
        const float *filter = d->filter + c;
        for (long ox = 0; ox < ow;) {
            const long ix0 = ox * sw - d->pad_left;
            float *o = outRow + ox * C + c;
            if (ox >= first && ox + P - 1 <= last) {
                SUF(dw_pixels)(P, image + (iy0 * iw + ix0) * C + c, dh * iw * C, dw * C, sw * C, filter, C,
                               ky0, ky1, kw, bias, lo, hi, o);
                ox += P;
                continue;
            }
            if (ox >= first && ox + 3 <= last) {
                SUF(dw_pixels)(4, image + (iy0 * iw + ix0) * C + c, dh * iw * C, dw * C, sw * C, filter, C,
                               ky0, ky1, kw, bias, lo, hi, o);
                ox += 4;
                continue;
            }
            long kx0 = 0, kx1 = kw;
            while (kx0 < kw && ix0 + kx0 * dw < 0) kx0++;
            while (kx1 > kx0 && ix0 + (kx1 - 1) * dw >= iw) kx1--;
            V a = bias;
            for (long ky = ky0; ky < ky1; ky++) {
                const float *s = image + ((iy0 + ky * dh) * iw + ix0) * C + c;
                for (long kx = kx0; kx < kx1; kx++)
                    a += SUF(load)(s + kx * dw * C) * SUF(load)(filter + (ky * kw + kx) * C);
            }
            SUF(store)(o, SUF(clamp)(a, lo, hi));
            ox += 1;
        }
    }
}

PA_INLINE void SUF(dw_row_body)(const pa_depthwise *d, long row, long c_begin, long c_end, const long KH, const long KW,
                                const int unitX) {
    const long kh = KH ? KH : d->kh, kw = KW ? KW : d->kw, dh = d->dilation_h;
    const long iy0 = (row % d->oh) * d->stride_h - d->pad_top;
    // Taps ky in [ky0, ky1) fall inside the input; on most rows that is all of them, and
    // constant bounds let the tap loops unroll.
    long ky0 = 0, ky1 = kh;
    while (ky0 < kh && iy0 + ky0 * dh < 0) ky0++;
    while (ky1 > ky0 && iy0 + (ky1 - 1) * dh >= d->ih) ky1--;
    if (ky0 == 0 && ky1 == kh) SUF(dw_row_taps)(d, row, c_begin, c_end, kh, kw, 0, kh, unitX);
    else SUF(dw_row_taps)(d, row, c_begin, c_end, kh, kw, ky0, ky1, unitX);
}

/// The same for any kernel size, and specialised for BlazePose's 3×3 and 5×5, stride 1 or not.
static inline void SUF(dw_row)(const pa_depthwise *d, long row, long c_begin, long c_end) {
    if (c_end <= c_begin) return;
    const int unitX = d->stride_w == 1 && d->dilation_w == 1;
    if (d->kh == 3 && d->kw == 3 && unitX) SUF(dw_row_body)(d, row, c_begin, c_end, 3, 3, 1);
    else if (d->kh == 3 && d->kw == 3) SUF(dw_row_body)(d, row, c_begin, c_end, 3, 3, 0);
    else if (d->kh == 5 && d->kw == 5 && unitX) SUF(dw_row_body)(d, row, c_begin, c_end, 5, 5, 1);
    else if (d->kh == 5 && d->kw == 5) SUF(dw_row_body)(d, row, c_begin, c_end, 5, 5, 0);
    else SUF(dw_row_body)(d, row, c_begin, c_end, 0, 0, 0);
}

// ---- Bilinear resize --------------------------------------------------------------------

/// a + (b − a) · f, each step its own statement: clang fuses a multiply and an add only
/// within one expression, so no path makes a multiply-add of it and all give the same bits.
PA_INLINE V SUF(lerp)(V a, V b, V f) {
    V d = b - a;
    V m = d * f;
    return a + m;
}

/// One output pixel's `count` channels (count ≤ VW) from c: the four neighbours blended
/// across, then down, then the residual added and clamped where there is one.
PA_INLINE void SUF(resize_vector)(const float *tl, const float *tr, const float *bl, const float *br, V fx, V fy,
                                  const float *res, V lo, V hi, float *o, long count) {
    const V t = SUF(lerp)(SUF(load_part)(tl, count), SUF(load_part)(tr, count), fx);
    const V u = SUF(lerp)(SUF(load_part)(bl, count), SUF(load_part)(br, count), fx);
    V v = SUF(lerp)(t, u, fy);
    if (res) v = SUF(clamp)(v + SUF(load_part)(res, count), lo, hi);
    SUF(store_first)(o, v, count);
}

/// Output rows [row_begin, row_end) of a bilinear resize (CPUKernels.h), a vector of
/// channels at a time, the last part-vector through load_part / store_first.
__attribute__((unused)) static void SUF(resize_rows)(const pa_resize *r, long row_begin, long row_end) {
    const long C = r->c, iw = r->iw, ow = r->ow, whole = C / VW * VW;
    const V lo = SUF(splat)(r->lo), hi = SUF(splat)(r->hi);
    for (long row = row_begin; row < row_end; row++) {
        const long b = row / r->oh, oy = row % r->oh;
        const float *top = r->input + (b * r->ih + r->y0[oy]) * iw * C;
        const float *bottom = r->input + (b * r->ih + r->y1[oy]) * iw * C;
        const V fy = SUF(splat)(r->fy[oy]);
        float *out = r->output + row * ow * C;
        const float *res = r->residual ? r->residual + row * ow * C : NULL;
        for (long ox = 0; ox < ow; ox++) {
            const long x0 = r->x0[ox] * C, x1 = r->x1[ox] * C, at = ox * C;
            const V fx = SUF(splat)(r->fx[ox]);
            long c = 0;
            for (; c < whole; c += VW)
                SUF(resize_vector)(top + x0 + c, top + x1 + c, bottom + x0 + c, bottom + x1 + c, fx, fy,
                                   res ? res + at + c : NULL, lo, hi, out + at + c, VW);
            if (c < C)
                SUF(resize_vector)(top + x0 + c, top + x1 + c, bottom + x0 + c, bottom + x1 + c, fx, fy,
                                   res ? res + at + c : NULL, lo, hi, out + at + c, C - c);
        }
    }
}

// ---- Convolution to a few output channels --------------------------------------------------

PA_INLINE float SUF(hsum)(V v) {
    float s = 0;
    for (int i = 0; i < VW; i++) s += v[i];
    return s;
}

#if VW == 8
/// (Σ a[0], Σ a[1], …, Σ a[7]): each level adds the even and odd lanes of two vectors, so
/// three levels of shuffles and adds sum eight vectors across at once.
PA_INLINE V SUF(sum8)(const V a[8]) {
    V p[4], q[2];
    PA_UNROLL for (int i = 0; i < 4; i++)
        p[i] = __builtin_shufflevector(a[2 * i], a[2 * i + 1], 0, 2, 4, 6, 8, 10, 12, 14)
             + __builtin_shufflevector(a[2 * i], a[2 * i + 1], 1, 3, 5, 7, 9, 11, 13, 15);
    PA_UNROLL for (int i = 0; i < 2; i++)
        q[i] = __builtin_shufflevector(p[2 * i], p[2 * i + 1], 0, 2, 4, 6, 8, 10, 12, 14)
             + __builtin_shufflevector(p[2 * i], p[2 * i + 1], 1, 3, 5, 7, 9, 11, 13, 15);
    return __builtin_shufflevector(q[0], q[1], 0, 2, 4, 6, 8, 10, 12, 14)
         + __builtin_shufflevector(q[0], q[1], 1, 3, 5, 7, 9, 11, 13, 15);
}
#endif

/// a[j] = Σ over the filter's taps and channels of pixel j's input × one output channel's
/// filter `wt` (kh, kw, C), for P interior pixels from column ix0 of input row iy0: each
/// filter vector loaded once for all P.
PA_INLINE void SUF(narrow_taps)(V *a, const int P, const pa_window *w, const float *image, const float *wt,
                                const long kh, const long kw, const long C, long iy0, long ix0) {
    const long step = w->stride_w * C;
    PA_UNROLL for (int j = 0; j < P; j++) a[j] = SUF(splat)(0);
    for (long ky = 0; ky < kh; ky++) {
        const float *src = image + ((iy0 + ky * w->dilation_h) * w->iw + ix0) * C;
        for (long kx = 0; kx < kw; kx++) {
            const float *s = src + kx * w->dilation_w * C, *wk = wt + (ky * kw + kx) * C;
            for (long c = 0; c < C; c += VW) {
                const V wv = SUF(load)(wk + c);
                PA_UNROLL for (int j = 0; j < P; j++) a[j] += SUF(load)(s + j * step + c) * wv;
            }
        }
    }
}

/// Output row `row` (of n · oh) of a convolution with few output channels (a segmentation
/// head's 1): for each pixel and output channel, the dot product of the (cout, kh, kw, c)
/// filter with the input under it, VW input channels at a time (c is a multiple of VW);
/// four interior pixels at once, so each filter vector is loaded once for all four.
PA_INLINE void SUF(narrow_row)(const pa_window *w, const float *filter, const float *bias, long cout,
                               float *output, const float *residual, long row, float lo, float hi,
                               const long KH, const long KW, const long CC) {
    // KH, KW, CC: the filter's size and the input channels as constants (0: read from w), so
    // that the tap loops of the common shape unroll.
    const long kh = KH ? KH : w->kh, kw = KW ? KW : w->kw, C = CC ? CC : w->c;
    const long K = kh * kw * C, sw = w->stride_w;
    const long b = row / w->oh, oy = row % w->oh;
    const long iy0 = oy * w->stride_h - w->pad_top;
    const int rowInside = iy0 >= 0 && iy0 + (kh - 1) * w->dilation_h < w->ih;
    long first, last;
    pa_inside_columns(w, &first, &last);
    const float *image = w->input + b * w->ih * w->iw * C;
    for (long ox = 0; ox < w->ow;) {
        float *out = output + (row * w->ow + ox) * cout;
        const float *res = residual ? residual + (row * w->ow + ox) * cout : NULL;
        const long ix0 = ox * sw - w->pad_left;
#if VW == 8
        // Eight interior pixels at once, their eight vectors of partial sums added across by
        // one transposing tree (SUF(sum8)): the sums cost a fraction of a pixel's taps
        // instead of a horizontal sum each (the segmentation head: 8 channels, 3 × 3, to 1).
        if (rowInside && ox >= first && ox + 7 <= last) {
            for (long o = 0; o < cout; o++) {
                V a[8];
                SUF(narrow_taps)(a, 8, w, image, filter + o * K, kh, kw, C, iy0, ix0);
                V v = SUF(sum8)(a) + SUF(splat)(bias[o]);
                if (res) for (int j = 0; j < 8; j++) v[j] += res[j * cout + o];
                v = SUF(clamp)(v, SUF(splat)(lo), SUF(splat)(hi));
                if (cout == 1) SUF(store)(out, v);
                else for (int j = 0; j < 8; j++) out[j * cout + o] = v[j];
            }
            ox += 8;
            continue;
        }
#endif
        if (rowInside && ox >= first && ox + 3 <= last) {
            for (long o = 0; o < cout; o++) {
                V a[4];
                SUF(narrow_taps)(a, 4, w, image, filter + o * K, kh, kw, C, iy0, ix0);
                float r[4] = {SUF(hsum)(a[0]), SUF(hsum)(a[1]), SUF(hsum)(a[2]), SUF(hsum)(a[3])};
                for (int j = 0; j < 4; j++) {
                    float v = r[j] + bias[o] + (res ? res[j * cout + o] : 0);
                    out[j * cout + o] = v < lo ? lo : v > hi ? hi : v;
                }
            }
            ox += 4;
            continue;
        }
        for (long o = 0; o < cout; o++) {
            V acc = {};
            for (long ky = 0; ky < kh; ky++) {
                const long iy = iy0 + ky * w->dilation_h;
                if (iy < 0 || iy >= w->ih) continue;
                for (long kx = 0; kx < kw; kx++) {
                    const long ix = ix0 + kx * w->dilation_w;
                    if (ix < 0 || ix >= w->iw) continue;
                    const float *s = image + (iy * w->iw + ix) * C, *wk = filter + o * K + (ky * kw + kx) * C;
                    for (long c = 0; c < C; c += VW) acc += SUF(load)(s + c) * SUF(load)(wk + c);
                }
            }
            float v = SUF(hsum)(acc) + bias[o] + (res ? res[o] : 0);
            out[o] = v < lo ? lo : v > hi ? hi : v;
        }
        ox += 1;
    }
}

/// Rows [row_begin, row_end) of the above.
static inline void SUF(narrow_rows)(const pa_window *w, const float *filter, const float *bias, long cout,
                                    float *output, const float *residual, long row_begin, long row_end, float lo, float hi) {
    if (w->kh == 3 && w->kw == 3 && w->c == 8)   // the segmentation head's
        for (long row = row_begin; row < row_end; row++) SUF(narrow_row)(w, filter, bias, cout, output, residual, row, lo, hi, 3, 3, 8);
    else
        for (long row = row_begin; row < row_end; row++) SUF(narrow_row)(w, filter, bias, cout, output, residual, row, lo, hi, 0, 0, 0);
}

// ---- Weight gradients: C[i, j] += Σ_r A[r, i] · B[r, j] -----------------------------------

/// The first `count` floats at p, zeros after (none when count ≤ 0).
PA_INLINE V SUF(load_upto)(const float *p, long count) {
    if (count <= 0) return SUF(splat)(0);
    return SUF(load_part)(p, count);
}

PA_INLINE void SUF(store_upto)(float *p, V v, long count) {
    if (count > 0) SUF(store_first)(p, v, count);
}

/// An MR × (NP · 16) block of C, `width` columns valid, accumulated over `rows` rows of A
/// and B: the registers of the GEMM tile, A broadcast down its column (A[r, i]) and B
/// loaded along its row. FULL: all NP · 16 columns valid (plain loads in the loop).
#define ATB_FUNCTION(NAME, MR, NP, FULL)                                                               \
PA_INLINE void SUF(NAME)(const float *a, long lda, const float *b, long ldb, long rows, long groups,  \
                         long gsa, long gsb, float *c, long ldc, long width) {                         \
    V acc[MR][NP * NV];                                                                                \
    PA_UNROLL for (int m = 0; m < MR; m++)                                                             \
        PA_UNROLL for (int j = 0; j < NP * NV; j++) acc[m][j] = SUF(load_upto)(c + m * ldc + j * VW, width - j * VW); \
    for (long g = 0; g < groups; g++)                                                                  \
    for (long r = 0; r < rows; r++) {                                                                  \
        V bv[NP * NV];                                                                                 \
        const float *br = b + g * gsb + r * ldb, *ar = a + g * gsa + r * lda;                          \
        PA_UNROLL for (int j = 0; j < NP * NV; j++)                                                    \
            bv[j] = FULL ? SUF(load)(br + j * VW) : SUF(load_upto)(br + j * VW, width - j * VW);       \
        PA_UNROLL for (int m = 0; m < MR; m++) {                                                       \
            V x = SUF(splat)(ar[m]);                                                                   \
            PA_UNROLL for (int j = 0; j < NP * NV; j++) acc[m][j] += x * bv[j];                        \
        }                                                                                              \
    }                                                                                                  \
    PA_UNROLL for (int m = 0; m < MR; m++)                                                             \
        PA_UNROLL for (int j = 0; j < NP * NV; j++) SUF(store_upto)(c + m * ldc + j * VW, acc[m][j], width - j * VW); \
}
#define DEFINE_ATB(MR, NP) DEFINE_ATB_(MR, NP)
#define DEFINE_ATB_(MR, NP)                                                                            \
    ATB_FUNCTION(atb_##MR##x##NP, MR, NP, 1)                                                           \
    ATB_FUNCTION(atbp_##MR##x##NP, MR, NP, 0)

DEFINE_ATB(GEMM_MR, GEMM_NP)
DEFINE_ATB(GEMM_MR2, GEMM_NP)
DEFINE_ATB(1, GEMM_NP)
#if GEMM_NP > 1
DEFINE_ATB(GEMM_MR, 1)
DEFINE_ATB(GEMM_MR2, 1)
DEFINE_ATB(1, 1)
#endif

/// Rows 0..<m of C against the NP panels from column j (`width` valid), in MR-, MR2- and
/// 1-row tiles; KIND is atb (all columns valid) or atbp.
#define ATB_ROWS(KIND, NP, MR, MR2)                                                                    \
    do {                                                                                               \
        long i = 0;                                                                                    \
        for (; i + MR <= m; i += MR) SUF(KIND##_##MR##x##NP)(ar + i, lda, br + j, ldb, rn, gn, gsa, gsb, c + i * ldc + j, ldc, width); \
        for (; i + MR2 <= m; i += MR2) SUF(KIND##_##MR2##x##NP)(ar + i, lda, br + j, ldb, rn, gn, gsa, gsb, c + i * ldc + j, ldc, width); \
        for (; i < m; i++) SUF(KIND##_1x##NP)(ar + i, lda, br + j, ldb, rn, gn, gsa, gsb, c + i * ldc + j, ldc, width); \
    } while (0)
#define ATB_ROWS_EXPAND(KIND, NP, MR, MR2) ATB_ROWS(KIND, NP, MR, MR2)

/// C[i, j] += Σ_g Σ_r A_g[r, i] · B_g[r, j] for i < m and columns [col_begin, col_end): group
/// g's A starts g · gsa floats in (rows × m, row stride lda), its B g · gsb in (rows × ·, ldb);
/// C is m × · (ldc). Each element is summed over g, then r, in order.
static inline void SUF(gemm_atb)(const float *a, long lda, const float *b, long ldb, long rows, long groups,
                                 long gsa, long gsb, long m, float *c, long ldc, long col_begin, long col_end) {
    // Rows in chunks (whole groups, or a part of a single group) whose slices of A and B
    // stay in cache while every block of C passes over them.
    const long chunk = 256;
    const long per = groups > 1 ? (chunk / rows > 1 ? chunk / rows : 1) : 1;
    const long steps = groups > 1 ? groups : rows, stepRows = groups > 1 ? per : chunk;
    for (long s0 = 0; s0 < steps; s0 += stepRows) {
        const long sn = steps - s0 < stepRows ? steps - s0 : stepRows;
        const long rn = groups > 1 ? rows : sn, gn = groups > 1 ? sn : 1;
        const float *ar = groups > 1 ? a + s0 * gsa : a + s0 * lda, *br = groups > 1 ? b + s0 * gsb : b + s0 * ldb;
        long j = col_begin;
#if GEMM_NP > 1
        for (; j + GEMM_NP * 16 <= col_end; j += GEMM_NP * 16) {
            const long width = GEMM_NP * 16;
            ATB_ROWS_EXPAND(atb, GEMM_NP, GEMM_MR, GEMM_MR2);
        }
#endif
        for (; j < col_end; j += 16) {
            const long width = col_end - j < 16 ? col_end - j : 16;
            if (width == 16) ATB_ROWS_EXPAND(atb, 1, GEMM_MR, GEMM_MR2);
            else ATB_ROWS_EXPAND(atbp, 1, GEMM_MR, GEMM_MR2);
        }
    }
}

// ---- The arithmetic limit ----------------------------------------------------------------

/// `iterations` rounds of PEAK_ACC independent multiply-adds on whole vectors, registers
/// only: one FMA each where the target has FMA, a multiply and an add where it has not (the
/// portable path on x86-64). The chains are independent, so the loop is bound by how many
/// the core issues a cycle, not by their latency. Returns the operations done.
#ifndef PEAK_ACC
#define PEAK_ACC 12
#endif
__attribute__((unused)) static double SUF(peak_fp32)(long iterations) {
    V acc[PEAK_ACC];
    PA_UNROLL for (int j = 0; j < PEAK_ACC; j++) acc[j] = SUF(splat)(1.0f + 0.001f * (float)j);
    // x · acc + y tends to y / (1 − x) = 1: no overflow and no subnormals however long it runs.
    const V x = SUF(splat)(0.999f), y = SUF(splat)(0.001f);
    for (long i = 0; i < iterations; i++) {
        PA_UNROLL for (int j = 0; j < PEAK_ACC; j++) acc[j] = acc[j] * x + y;
    }
    V sum = acc[0];
    PA_UNROLL for (int j = 1; j < PEAK_ACC; j++) sum += acc[j];
    volatile float sink = sum[0];
    (void)sink;
    return 2.0 * VW * PEAK_ACC * (double)iterations;
}
#undef PEAK_ACC

#undef V
#undef NV
#undef PA_UNROLL
#undef PA_INLINE
#undef DEFINE_TILE
#undef DEFINE_TILE_
#undef TILE_FUNCTION
#undef GEMM_ROWS
#undef CONV_TILES
#undef CONV_TILES_EXPAND
#undef CONV_PIXELS
#undef CONV_PIXELS_
#undef EDGE_TILE
#undef GEMM_ROWS_EXPAND
#undef FOR_PANELS
#undef VH
#undef HALF_TILE_FUNCTION
#undef DEFINE_HALF_TILE
#undef DEFINE_HALF_TILE_
#undef ATB_FUNCTION
#undef DEFINE_ATB
#undef DEFINE_ATB_
#undef ATB_ROWS
#undef ATB_ROWS_EXPAND
