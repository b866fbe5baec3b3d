#include "CPUKernels.h"

// no_builtin: the copy loops stay loops. Turned into memcpy/memset calls, which is what
// clang does with such loops, the 9- to 27-float runs of a 3-channel input cost more in
// calls than in copying.
__attribute__((no_builtin("memcpy", "memset")))
void pa_im2col(const pa_window *w, long pixel_begin, long pixel_end, float *buf) {
    const long C = w->c, kw = w->kw, K = w->kh * kw * C;
    for (long p = pixel_begin; p < pixel_end; p++) {
        const long ox = p % w->ow, rest = p / w->ow, oy = rest % w->oh, b = rest / w->oh;
        const long iy0 = oy * w->stride_h - w->pad_top, ix0 = ox * w->stride_w - w->pad_left;
        const float *image = w->input + b * w->ih * w->iw * C;
        float *row = buf + (p - pixel_begin) * K;
        for (long ky = 0; ky < w->kh; ky++) {
            const long iy = iy0 + ky * w->dilation_h;
            float *dst = row + ky * kw * C;
            if (iy < 0 || iy >= w->ih) {
                for (long i = 0; i < kw * C; i++) dst[i] = 0;
                continue;
            }
            const float *src = image + iy * w->iw * C;
            if (w->dilation_w == 1 && ix0 >= 0 && ix0 + kw <= w->iw) {   // one contiguous run
                src += ix0 * C;
                for (long i = 0; i < kw * C; i++) dst[i] = src[i];
                continue;
            }
            for (long kx = 0; kx < kw; kx++) {
                const long ix = ix0 + kx * w->dilation_w;
                float *d = dst + kx * C;
                if (ix < 0 || ix >= w->iw) { for (long i = 0; i < C; i++) d[i] = 0; }
                else { for (long i = 0; i < C; i++) d[i] = src[ix * C + i]; }
            }
        }
    }
}
