// The pose engine's C kernels (Sources/CPUKernels) against the definition, on every path
// the CPU running this program supports: built for aarch64 and run under qemu-user by
// check-arm64-kernels.sh, this is the check of the NEON paths that the Swift tests cannot
// make here (no Swift toolchain for aarch64 on this machine's registries).
//
// Each case is a convolution shape BlazePose has or one that exercises a tail (channels
// past the last vector, odd panels, odd K, dilation, padding, few output channels, more rows
// than a bfloat16 block), with and without a fused residual and a clamp. The reference sums
// in double; the tolerance, 1e-4 × (1 + |value|), is that of the Swift ConvolutionKernelTests
// (float sums of at most a few hundred products of values below 1, where fused and unfused
// multiply-adds differ by ~1e-6). A bfloat16 path's products (avx512bf16, neonbf16) are held
// to the same bound against the definition on their operands rounded to bfloat16 (to
// nearest, ties to even), which is what they compute up to the FP32 sums' order and rounding.
// The bilinear resize is held to the same bits as a float-at-a-time blend, on every path.
//
// Prints one line per case and path, then "N passed, M failed"; exit 1 on any failure.
// `check_kernels --paths` only prints the paths this CPU runs ("paths: portable neonbf16").
#include "CPUKernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    long n, ih, iw, cin, cout, kh, kw, stride, dilation, pad;
} geometry;

static long out_h(const geometry *g) { return (g->ih + 2 * g->pad - (g->kh - 1) * g->dilation - 1) / g->stride + 1; }
static long out_w(const geometry *g) { return (g->iw + 2 * g->pad - (g->kw - 1) * g->dilation - 1) / g->stride + 1; }

static unsigned long long rng_state;
static float uniform(void) {   // SplitMix64, as the Swift tests' generator
    unsigned long long z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (float)((double)(z >> 11) / 9007199254740992.0) * 2 - 1;
}
static float *random_floats(long count, unsigned long long seed) {
    rng_state = seed;
    float *p = malloc(sizeof(float) * (count > 0 ? count : 1));
    for (long i = 0; i < count; i++) p[i] = uniform();
    return p;
}

/// The definition: out = clamp(bias + Σ in · w (+ residual), lo, hi). Dense filter
/// (cout, kh, kw, cin), or depthwise (kh, kw, c) when `depthwise`.
static void reference(const geometry *g, const float *in, const float *filter, const float *bias, const float *residual,
                      int depthwise, float lo, float hi, float *out) {
    long oh = out_h(g), ow = out_w(g);
    for (long b = 0; b < g->n; b++)
        for (long oy = 0; oy < oh; oy++)
            for (long ox = 0; ox < ow; ox++)
                for (long o = 0; o < g->cout; o++) {
                    double acc = bias[o];
                    for (long ky = 0; ky < g->kh; ky++)
                        for (long kx = 0; kx < g->kw; kx++) {
                            long iy = oy * g->stride - g->pad + ky * g->dilation, ix = ox * g->stride - g->pad + kx * g->dilation;
                            if (iy < 0 || iy >= g->ih || ix < 0 || ix >= g->iw) continue;
                            const float *px = in + ((b * g->ih + iy) * g->iw + ix) * g->cin;
                            if (depthwise) {
                                acc += (double)px[o] * filter[(ky * g->kw + kx) * g->cout + o];
                            } else {
                                for (long c = 0; c < g->cin; c++)
                                    acc += (double)px[c] * filter[((o * g->kh + ky) * g->kw + kx) * g->cin + c];
                            }
                        }
                    long at = ((b * oh + oy) * ow + ox) * g->cout + o;
                    if (residual) acc += residual[at];
                    float v = (float)acc;
                    out[at] = v < lo ? lo : v > hi ? hi : v;
                }
}

static int passed, failed;

static void compare(const char *what, const char *path, const float *got, const float *want, long count) {
    double worst = 0;
    long at = 0;
    for (long i = 0; i < count; i++) {
        double e = fabs((double)got[i] - want[i]) / (1 + fabs(want[i]));
        if (e > worst || isnan(e)) { worst = isnan(e) ? INFINITY : e; at = i; }
    }
    int ok = worst <= 1e-4;
    printf("%s %-9s %-58s max relative error %.2e%s\n", ok ? "ok  " : "FAIL", path, what, worst,
           ok ? "" : " (see the value below)");
    if (!ok) printf("     at %ld: got %.7g, expected %.7g\n", at, got[at], want[at]);
    ok ? passed++ : failed++;
}

/// Packs a (n, k) row-major filter into 16-channel panels, as PackedWeights.swift does.
static pa_packed_weights pack(const float *filter, const float *bias, long n, long k) {
    long panels = (n + 15) / 16;
    float *data = calloc(panels * k * 16, sizeof(float)), *b = calloc(panels * 16, sizeof(float));
    for (long col = 0; col < n; col++) {
        for (long kk = 0; kk < k; kk++) data[((col / 16) * k + kk) * 16 + col % 16] = filter[col * k + kk];
        b[col] = bias[col];
    }
    return (pa_packed_weights){.data = data, .bias = b, .k = k, .n = n, .panels = panels};
}

#define PATHS 5
static const pa_path paths[PATHS] = {PA_PATH_PORTABLE, PA_PATH_AVX2, PA_PATH_AVX512, PA_PATH_AVX512_BF16, PA_PATH_NEON_BF16};
static const char *path_names[PATHS] = {"portable", "avx2", "avx512", "avx512bf16", "neonbf16"};
static const char *path_name(pa_path p) {
    for (int i = 0; i < PATHS; i++) if (paths[i] == p) return path_names[i];
    return "?";
}

/// Whether the path multiplies packed weights in bfloat16 (given a pa_pack_bf16 copy).
static int rounds(pa_path p) { return p == PA_PATH_AVX512_BF16 || p == PA_PATH_NEON_BF16; }

/// x rounded to bfloat16 (to nearest, ties to even), as a float: what a bfloat16 path multiplies.
static float bfloat16(float x) {
    unsigned u;
    memcpy(&u, &x, sizeof u);
    u = (u + 0x7FFFu + ((u >> 16) & 1)) & 0xFFFF0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

static float *rounded(const float *x, long count, int round) {
    float *r = malloc(sizeof(float) * (count > 0 ? count : 1));
    for (long i = 0; i < count; i++) r[i] = round ? bfloat16(x[i]) : x[i];
    return r;
}

/// The product of a 1×1 convolution, as the engine's threads share it out: the rows in two
/// parts, each part's panels in two ranges.
static void split_gemm(pa_path path, const float *in, long k, long rows, const pa_packed_weights *pw, float *out,
                       const float *res, long ldo, float lo, float hi) {
    const long half = rows / 2 + 1 < rows ? rows / 2 + 1 : rows, p1 = pw->panels / 2;
    const long starts[2] = {0, half}, ends[2] = {half, rows};
    for (int part = 0; part < 2; part++) {
        const long s = starts[part], n = ends[part] - s;
        const float *r = res ? res + s * ldo : NULL;
        pa_packed_gemm(path, in + s * k, k, n, pw, 0, p1, out + s * ldo, r, ldo, lo, hi);
        pa_packed_gemm(path, in + s * k, k, n, pw, p1, pw->panels, out + s * ldo, r, ldo, lo, hi);
    }
}

/// One convolution's operands and the kernels' view of them.
typedef struct {
    const geometry *g;
    long oh, ow, k, count;
    float *in, *filter, *bias, *residual, *scratch;
    long *koff;
    pa_window w;
    pa_packed_weights pw;
} conv_case;

static conv_case make_case(const geometry *g, int seed) {
    conv_case c = {.g = g, .oh = out_h(g), .ow = out_w(g), .k = g->kh * g->kw * g->cin};
    c.count = g->n * c.oh * c.ow * g->cout;
    c.in = random_floats(g->n * g->ih * g->iw * g->cin, 10 + seed);
    c.filter = random_floats(g->cout * c.k, 20 + seed);
    c.bias = random_floats(g->cout, 30 + seed);
    c.residual = random_floats(c.count, 40 + seed);
    c.scratch = malloc(sizeof(float) * c.k);
    c.w = (pa_window){.input = c.in, .n = g->n, .ih = g->ih, .iw = g->iw, .c = g->cin, .oh = c.oh, .ow = c.ow, .kh = g->kh,
                      .kw = g->kw, .stride_h = g->stride, .stride_w = g->stride, .dilation_h = g->dilation,
                      .dilation_w = g->dilation, .pad_top = g->pad, .pad_left = g->pad};
    c.koff = malloc(sizeof(long) * c.k);
    for (long ky = 0; ky < g->kh; ky++)
        for (long kx = 0; kx < g->kw; kx++)
            for (long ch = 0; ch < g->cin; ch++)
                c.koff[(ky * g->kw + kx) * g->cin + ch] = (ky * g->dilation * g->iw + kx * g->dilation) * g->cin + ch;
    c.pw = pack(c.filter, c.bias, g->cout, c.k);
    return c;
}

static void free_case(conv_case *c) {
    free(c->in); free(c->filter); free(c->bias); free(c->residual); free(c->scratch); free(c->koff);
    free((void *)c->pw.data); free((void *)c->pw.bias); free((void *)c->pw.bf16);
}

/// The packed product (a 1×1 convolution's GEMM straight from the input, else the
/// convolution read in place) on `path` against the definition on operands rounded as
/// `round` says; a GEMM also split between calls as the engine's threads split it.
static void check_packed(const conv_case *c, pa_path path, int round, const float *res, float lo, float hi,
                         const char *suffix) {
    const geometry *g = c->g;
    const long rows = g->n * c->oh * c->ow;
    float *rin = rounded(c->in, g->n * g->ih * g->iw * g->cin, round), *rfilter = rounded(c->filter, g->cout * c->k, round);
    float *want = malloc(sizeof(float) * c->count), *got = malloc(sizeof(float) * c->count);
    reference(g, rin, rfilter, c->bias, res, 0, lo, hi, want);
    char what[160];
    if (g->kh == 1 && g->kw == 1 && g->stride == 1 && g->pad == 0) {
        memset(got, 0xff, sizeof(float) * c->count);   // NaN: a value left unwritten fails
        pa_packed_gemm(path, c->in, c->k, rows, &c->pw, 0, c->pw.panels, got, res, g->cout, lo, hi);
        snprintf(what, sizeof what, "gemm %ldx%ld<-%ld%s", rows, g->cout, c->k, suffix);
        compare(what, path_name(path), got, want, c->count);
        memset(got, 0xff, sizeof(float) * c->count);
        split_gemm(path, c->in, c->k, rows, &c->pw, got, res, g->cout, lo, hi);
        snprintf(what, sizeof what, "gemm %ldx%ld<-%ld split%s", rows, g->cout, c->k, suffix);
        compare(what, path_name(path), got, want, c->count);
    } else {
        memset(got, 0xff, sizeof(float) * c->count);
        pa_conv_rows(path, &c->w, c->koff, &c->pw, got, res, 0, g->n * c->oh, lo, hi, c->scratch);
        snprintf(what, sizeof what, "conv %ldx%ld %ld->%ld k%ldx%ld s%ld d%ld p%ld%s", g->ih, g->iw, g->cin, g->cout, g->kh,
                 g->kw, g->stride, g->dilation, g->pad, suffix);
        compare(what, path_name(path), got, want, c->count);
    }
    free(rin); free(rfilter); free(want); free(got);
}

/// The few-channel convolution (dot products, FP32 on every path).
static void check_narrow(const conv_case *c, pa_path path, const float *res, float lo, float hi, const char *suffix) {
    const geometry *g = c->g;
    float *want = malloc(sizeof(float) * c->count), *got = malloc(sizeof(float) * c->count);
    reference(g, c->in, c->filter, c->bias, res, 0, lo, hi, want);
    memset(got, 0xff, sizeof(float) * c->count);
    pa_narrow_conv_rows(path, &c->w, c->filter, c->bias, g->cout, got, res, 0, g->n * c->oh, lo, hi);
    char what[160];
    snprintf(what, sizeof what, "narrow conv %ldx%ld %ld->%ld k%ldx%ld%s", g->ih, g->iw, g->cin, g->cout, g->kh, g->kw, suffix);
    compare(what, path_name(path), got, want, c->count);
    free(want); free(got);
}

static void check_conv(const geometry *g, int seed, pa_path path) {
    conv_case c = make_case(g, seed);
    if (rounds(path)) {
        // The weights in bfloat16 as the engine packs them for this path; without that copy
        // (training's products) the path multiplies in FP32, checked once.
        unsigned short *bf = malloc(sizeof(unsigned short) * pa_bf16_count(&c.pw));
        pa_pack_bf16(&c.pw, bf);
        check_packed(&c, path, 0, NULL, -INFINITY, INFINITY, " fp32 weights");
        c.pw.bf16 = bf;
    }
    for (int r = 0; r < 2; r++) {
        const float *res = r ? c.residual : NULL;
        const float lo = r ? 0 : -INFINITY, hi = r ? 6 : INFINITY;
        const char *suffix = r ? " +residual relu6" : "";
        check_packed(&c, path, rounds(path), res, lo, hi, suffix);
        if (g->cout <= 4 && g->cin % 8 == 0) check_narrow(&c, path, res, lo, hi, suffix);
    }
    free_case(&c);
}

static void check_depthwise(const geometry *g, int seed, pa_path path) {
    long oh = out_h(g), ow = out_w(g), count = g->n * oh * ow * g->cout;
    float *in = random_floats(g->n * g->ih * g->iw * g->cin, 50 + seed), *filter = random_floats(g->kh * g->kw * g->cout, 60 + seed);
    float *bias = random_floats(g->cout, 70 + seed);
    float *want = malloc(sizeof(float) * count), *got = malloc(sizeof(float) * count);
    char what[160];
    for (int r = 0; r < 2; r++) {
        float lo = r ? 0 : -INFINITY, hi = r ? 6 : INFINITY;
        reference(g, in, filter, bias, NULL, 1, lo, hi, want);
        memset(got, 0xff, sizeof(float) * count);
        pa_depthwise d = {.input = in, .filter = filter, .bias = bias, .output = got, .n = g->n, .ih = g->ih, .iw = g->iw,
                          .c = g->cout, .oh = oh, .ow = ow, .kh = g->kh, .kw = g->kw, .stride_h = g->stride, .stride_w = g->stride,
                          .dilation_h = g->dilation, .dilation_w = g->dilation, .pad_top = g->pad, .pad_left = g->pad,
                          .lo = lo, .hi = hi};
        // In 64-channel groups, as DepthwiseConv.swift hands them out.
        for (long c0 = 0; c0 < g->cout; c0 += 64)
            pa_depthwise_rows(path, &d, 0, g->n * oh, c0, c0 + 64 < g->cout ? c0 + 64 : g->cout);
        snprintf(what, sizeof what, "depthwise %ldx%ld c%ld k%ldx%ld s%ld d%ld p%ld%s", g->ih, g->iw, g->cout, g->kh, g->kw,
                 g->stride, g->dilation, g->pad, r ? " relu6" : "");
        compare(what, path_name(path), got, want, count);
    }
    free(in); free(filter); free(bias); free(want); free(got);
}

/// A bilinear resize against the same three blends done a float at a time: every path must
/// give the same bits (CPUKernels.h), so the check is exact. TensorFlow's half-pixel rule,
/// or align_corners, gives the rows and columns each output reads, as Layout.swift does.
static void axis(long in, long out, int align, long *lowv, long *highv, float *frac) {
    const float scale = align && out > 1 ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
    for (long o = 0; o < out; o++) {
        const float src = align ? (float)o * scale : ((float)o + 0.5f) * scale - 0.5f;
        const float low = floorf(src);
        long l = (long)low < 0 ? 0 : (long)low, h = (long)ceilf(src) > in - 1 ? in - 1 : (long)ceilf(src);
        lowv[o] = l > in - 1 ? in - 1 : l; highv[o] = h; frac[o] = src - low;
    }
}

static float lerp1(float a, float b, float f) {
    float d = b - a;
    float m = d * f;
    return a + m;
}

static void check_resize(long n, long ih, long iw, long c, long oh, long ow, int align, int seed, pa_path path) {
    const long count = n * oh * ow * c;
    float *in = random_floats(n * ih * iw * c, 80 + seed), *res = random_floats(count, 90 + seed);
    float *want = malloc(sizeof(float) * count), *got = malloc(sizeof(float) * count);
    long *idx = malloc(sizeof(long) * 2 * (oh + ow));
    float *frac = malloc(sizeof(float) * (oh + ow));
    axis(ih, oh, align, idx, idx + oh, frac);
    axis(iw, ow, align, idx + 2 * oh, idx + 2 * oh + ow, frac + oh);
    char what[160];
    for (int r = 0; r < 2; r++) {
        const float lo = r ? 0 : -INFINITY, hi = r ? 6 : INFINITY;
        for (long b = 0; b < n; b++) for (long y = 0; y < oh; y++) for (long x = 0; x < ow; x++) for (long k = 0; k < c; k++) {
            const float *top = in + (b * ih + idx[y]) * iw * c, *bottom = in + (b * ih + idx[oh + y]) * iw * c;
            const long x0 = idx[2 * oh + x] * c + k, x1 = idx[2 * oh + ow + x] * c + k, at = ((b * oh + y) * ow + x) * c + k;
            float v = lerp1(lerp1(top[x0], top[x1], frac[oh + x]), lerp1(bottom[x0], bottom[x1], frac[oh + x]), frac[y]);
            if (r) { v += res[at]; v = v < lo ? lo : v > hi ? hi : v; }
            want[at] = v;
        }
        memset(got, 0xff, sizeof(float) * count);
        pa_resize z = {.input = in, .residual = r ? res : NULL, .output = got, .n = n, .ih = ih, .iw = iw, .c = c,
                       .oh = oh, .ow = ow, .y0 = idx, .y1 = idx + oh, .x0 = idx + 2 * oh, .x1 = idx + 2 * oh + ow,
                       .fy = frac, .fx = frac + oh, .lo = lo, .hi = hi};
        pa_resize_rows(path, &z, 0, n * oh);
        long differ = 0, at = 0;
        for (long i = 0; i < count; i++)
            if (memcmp(&got[i], &want[i], sizeof(float)) != 0) { if (!differ) at = i; differ++; }
        snprintf(what, sizeof what, "resize %ldx%ld to %ldx%ld c%ld%s%s", ih, iw, oh, ow, c, align ? " align" : "",
                 r ? " +add relu6" : "");
        printf("%s %-9s %-58s %ld values not the same bits\n", differ ? "FAIL" : "ok  ", path_name(path), what, differ);
        if (differ) printf("     at %ld: got %.9g, expected %.9g\n", at, got[at], want[at]);
        differ ? failed++ : passed++;
    }
    free(in); free(res); free(want); free(got); free(idx); free(frac);
}

/// The arithmetic peaks' loops run and count their operations (not their speed): FP32 on
/// every path, bfloat16 dot products (24 chains of 16 lanes × 2 on avx512bf16, 4 × 2 on
/// neonbf16) on the bfloat16 paths alone.
static void check_peaks(pa_path path) {
    const long iterations = 1000;
    const double fp32 = pa_peak_flops(path, PA_PEAK_FP32, iterations), bf16 = pa_peak_flops(path, PA_PEAK_BF16, iterations);
    const double want = path == PA_PATH_AVX512_BF16 ? 2.0 * 32 * 24 * iterations
                      : path == PA_PATH_NEON_BF16 ? 2.0 * 8 * 24 * iterations : 0;
    const int ok = fp32 > 0 && bf16 == want;
    printf("%s %-9s %-58s fp32 %.0f, bf16 %.0f (expected %.0f)\n", ok ? "ok  " : "FAIL", path_name(path),
           "peak loops' operation counts", fp32, bf16, want);
    ok ? passed++ : failed++;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--paths") == 0) {
        printf("paths:");
        for (int p = 0; p < PATHS; p++) if (pa_path_supported(paths[p])) printf(" %s", path_names[p]);
        printf("\n");
        return 0;
    }
    const geometry convs[] = {
        {1, 9, 11, 3, 24, 3, 3, 1, 1, 1},     // a first layer: 3 channels, taps (K 27, odd)
        {1, 10, 12, 3, 24, 3, 3, 2, 1, 1},    // stride 2, a half-empty second panel
        {1, 8, 9, 5, 40, 2, 3, 1, 2, 2},      // dilation, three panels
        {1, 9, 10, 5, 27, 3, 3, 1, 1, 1},     // odd K (45), a last panel of 11 channels
        {1, 7, 7, 16, 1, 3, 3, 1, 1, 1},      // one output channel (the segmentation head)
        {1, 6, 13, 8, 3, 3, 3, 2, 1, 0},
        {2, 5, 6, 24, 33, 1, 1, 1, 1, 0},     // 1×1: the GEMM straight from the input; 1 channel past 2 panels
        {1, 5, 7, 37, 20, 1, 1, 1, 1, 0},     // odd K past a 32-value block, a last panel of 4
        {1, 6, 7, 17, 30, 1, 1, 1, 1, 0},     // odd K, a last panel of 14
        {1, 4, 5, 1, 16, 1, 1, 1, 1, 0},      // K 1: half a bfloat16 pair
        {1, 7, 9, 300, 48, 1, 1, 1, 1, 0},    // more rows than one bfloat16 block holds
        {1, 14, 14, 112, 672, 1, 1, 1, 1, 0}, // BlazePose's expansion layers
        {1, 7, 7, 1152, 192, 1, 1, 1, 1, 0},  // and projections
    };
    const geometry depthwise[] = {
        {1, 9, 11, 20, 20, 3, 3, 1, 1, 1},    // 16 + 4 channels: vector and scalar tails
        {1, 7, 7, 40, 40, 5, 5, 1, 1, 2},     // narrow rows under a 5-wide filter
        {1, 30, 31, 24, 24, 5, 5, 1, 1, 2},
        {1, 12, 13, 72, 72, 3, 3, 2, 1, 1},   // stride 2, two channel groups
        {1, 9, 10, 8, 8, 3, 2, 1, 2, 2},      // any kernel size, dilation
        {1, 56, 56, 144, 144, 3, 3, 1, 1, 1}, // BlazePose's
    };
    for (int p = 0; p < PATHS; p++) {
        if (!pa_path_supported(paths[p])) continue;
        for (int i = 0; i < (int)(sizeof convs / sizeof convs[0]); i++) check_conv(&convs[i], i, paths[p]);
        for (int i = 0; i < (int)(sizeof depthwise / sizeof depthwise[0]); i++) check_depthwise(&depthwise[i], i, paths[p]);
        // The segmentation head's 8 channels (an 8-wide path on AVX-512), 16 + 8, a tail of 3; down and with align_corners.
        check_resize(1, 5, 6, 8, 10, 12, 0, 0, paths[p]);
        check_resize(2, 4, 7, 24, 8, 14, 0, 1, paths[p]);
        check_resize(1, 6, 5, 35, 12, 10, 0, 2, paths[p]);
        check_resize(1, 9, 11, 16, 4, 5, 1, 3, paths[p]);
        check_peaks(paths[p]);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
