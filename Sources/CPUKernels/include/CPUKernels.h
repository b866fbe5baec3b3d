// The pose engine's hot loops in C, compiled once per instruction set and chosen at run
// time: Swift has no per-function target attribute, so one binary holding AVX-512, AVX2
// and portable code for the same kernel needs C's. Every path is the same source
// (KernelTemplate.h) over vectors of a different width.
#ifndef CPU_KERNELS_H
#define CPU_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/// The instruction sets the kernels are built for. Portable is plain C over 128-bit
/// vectors (SSE2 on x86-64, NEON on ARM64), which every CPU of either kind has. The
/// bfloat16 paths compute only the products of weights packed in bfloat16 (pa_pack_bf16)
/// their own way; their other kernels are those of the FP32 path they extend.
typedef enum {
    PA_PATH_PORTABLE = 0,
    PA_PATH_AVX2 = 1,      // AVX2 + FMA, 8 floats a vector, 16 registers
    PA_PATH_AVX512 = 2,    // AVX-512 F/DQ/BW/VL, 16 floats a vector, 32 registers
    PA_PATH_AVX512_BF16 = 3, // the AVX-512 path, with bfloat16 products (VDPBF16PS) where
                             // the weights were packed in bfloat16 too (pa_pack_bf16)
    PA_PATH_NEON_BF16 = 4,   // ARM64 with FEAT_BF16: the portable path, with bfloat16
                             // products (BFDOT) where the weights were packed in bfloat16
} pa_path;

/// 1 when this CPU, and the OS's saving of its registers, support `path`.
int pa_path_supported(pa_path path);

/// Rows of the output block one GEMM micro-kernel call computes on `path`: work split
/// between threads in multiples of it wastes no tile.
long pa_gemm_tile_rows(pa_path path);

/// 16-wide weight panels of one GEMM micro-kernel call on `path` (1 or 2): work split
/// between threads by panels should be split in multiples of it.
long pa_gemm_tile_panels(pa_path path);

/// Weights packed at load into panels of 16 output channels: panel p holds rows
/// k = 0..<K of 16 contiguous floats (zero past N), and its 16 biases.
typedef struct {
    const float *data;   // panels × K × 16
    const float *bias;   // panels × 16
    long k, n, panels;
    /// The same panels in bfloat16, or NULL: panel p holds, for each pair of rows
    /// (2q, 2q + 1), q < (K + 1) / 2, the 16 channels' two values side by side (32
    /// bfloat16s, the odd row zero past K), as VDPBF16PS and BFDOT pair them. Only the
    /// bfloat16 paths' products read it; where it is NULL they use `data`.
    const unsigned short *bf16;
} pa_packed_weights;

/// bfloat16s a pa_pack_bf16 of these weights takes: panels × ((K + 1) / 2) × 32.
long pa_bf16_count(const pa_packed_weights *w);

/// Rounds the float panels of `w` to bfloat16 (to nearest, ties to even) into `out`
/// (pa_bf16_count(w) values), in the layout `bf16` describes.
void pa_pack_bf16(const pa_packed_weights *w, unsigned short *out);

/// The arithmetic limit of one core: `iterations` rounds of independent multiply-adds on
/// registers only (no memory), as the path's kernels issue them. Returns the floating-point
/// operations done (a multiply-add counts 2; a bfloat16 pair product, VDPBF16PS or BFDOT,
/// does 2 per pair), for the caller to divide by the time it took. PA_PEAK_BF16 needs a
/// bfloat16 path (0 on the others).
typedef enum {
    PA_PEAK_FP32 = 0,   // FP32 on `path`'s vectors: FMA on AVX-512 and AVX2, mul + add portable
    PA_PEAK_BF16 = 1,   // bfloat16 dot products into FP32: VDPBF16PS (512 bits), BFDOT (128)
} pa_peak_kind;
double pa_peak_flops(pa_path path, pa_peak_kind kind, long iterations);

/// out[r, c] = clamp(a[r, :] · W[:, c] + bias[c] + residual[r, c], lo, hi) for rows
/// 0..<rows and the output channels of panels [panel_begin, panel_end). a has row stride
/// lda; out and residual ldo. `residual` is NULL for a layer without one (here and below:
/// a residual ADD fused into the convolution before it, see the Planner).
void pa_packed_gemm(pa_path path, const float *a, long lda, long rows, const pa_packed_weights *w,
                    long panel_begin, long panel_end, float *out, const float *residual, long ldo, float lo, float hi);

/// C[i, j] += Σ_g Σ_r A_g[r, i] · B_g[r, j] for rows i < m of C and its columns [col_begin,
/// col_end), r < rows, g < groups: a weight gradient (A the output's gradient, B the layer's
/// input). Group g's A starts g · gsa floats after a (row stride lda), its B g · gsb after b
/// (ldb); C has row stride ldc. Each element is summed over g, then r, in order (the same
/// bits however the columns are split between threads). A temporal convolution's groups are
/// its sequences, B a zero-padded input whose rows overlap (ldb = stride · channels).
void pa_gemm_atb(pa_path path, const float *a, long lda, const float *b, long ldb, long rows, long groups,
                 long gsa, long gsb, long m, float *c, long ldc, long col_begin, long col_end);

/// A depthwise convolution with depth multiplier 1, NHWC:
/// input (n, ih, iw, c), filter (kh, kw, c), bias (c), output (n, oh, ow, c).
typedef struct {
    const float *input, *filter, *bias;
    float *output;
    long n, ih, iw, c, oh, ow;
    long kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    float lo, hi;   // the fused activation as a clamp
} pa_depthwise;

/// Output rows [row_begin, row_end) of the flattened (n · oh) rows, channels
/// [c_begin, c_end); c_begin is a multiple of 16.
void pa_depthwise_rows(pa_path path, const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end);

/// A bilinear resize, NHWC: input (n, ih, iw, c) → output (n, oh, ow, c). Output row oy
/// blends input rows y0[oy] and y1[oy] by fy[oy], output column ox input columns x0[ox]
/// and x1[ox] by fx[ox] (the caller applies TensorFlow's coordinate rules). With a
/// residual (n, oh, ow, c), the ADD fused after it: clamp(resized + residual, lo, hi).
typedef struct {
    const float *input, *residual;   // residual NULL for none
    float *output;
    long n, ih, iw, c, oh, ow;
    const long *y0, *y1, *x0, *x1;
    const float *fy, *fx;
    float lo, hi;
} pa_resize;

/// Output rows [row_begin, row_end) of the flattened (n · oh). Every path gives the same bits.
void pa_resize_rows(pa_path path, const pa_resize *r, long row_begin, long row_end);

/// The window of a convolution over an NHWC input (n, ih, iw, c) giving (n, oh, ow, ·).
typedef struct {
    const float *input;
    long n, ih, iw, c, oh, ow;
    long kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
} pa_window;

/// Output rows [row_begin, row_end) (of n · oh) of a convolution on packed weights read
/// straight from its NHWC input: `koff[k]` is the offset of the filter's value k (ky, kx,
/// channel) from its window's first input value, (ky · dilation_h · iw + kx · dilation_w) ·
/// c + channel. Pixels over the padding are gathered into `scratch` (K floats).
void pa_conv_rows(pa_path path, const pa_window *w, const long *koff, const pa_packed_weights *pw, float *output,
                  const float *residual, long row_begin, long row_end, float lo, float hi, float *scratch);

/// A convolution to at most a few output channels (`cout`), whose input channels are a
/// multiple of 8: output rows [row_begin, row_end) of the flattened (n · oh), each pixel
/// and channel a dot product with the (cout, kh, kw, c) filter, plus the residual, clamped
/// to [lo, hi].
void pa_narrow_conv_rows(pa_path path, const pa_window *w, const float *filter, const float *bias, long cout,
                         float *output, const float *residual, long row_begin, long row_end, float lo, float hi);

/// im2col for output pixels [pixel_begin, pixel_end) of the flattened (n · oh · ow): row r
/// of `buf` holds the kh · kw · c input values under the filter at pixel_begin + r, zeros
/// where it hangs over the padding. Plain C: it only moves memory.
void pa_im2col(const pa_window *w, long pixel_begin, long pixel_end, float *buf);

#ifdef __cplusplus
}
#endif
#endif
