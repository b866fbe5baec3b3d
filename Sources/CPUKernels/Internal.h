// What the path files share, not part of the API.
#ifndef CPU_KERNELS_INTERNAL_H
#define CPU_KERNELS_INTERNAL_H
#include "CPUKernels.h"

/// Channels [c_begin, c_end) of one depthwise output row, one float at a time: the
/// channels left over after the last whole vector.
void pa_dw_row_scalar(const pa_depthwise *d, long row, long c_begin, long c_end);

#define PA_PATH_FUNCTIONS(suffix)                                                                  \
    void pa_packed_gemm_##suffix(const float *a, long lda, long rows, const pa_packed_weights *w,   \
                                 long panel_begin, long panel_end, float *out, long ldo, float lo, float hi); \
    void pa_conv_rows_##suffix(const pa_window *w, const long *koff, const pa_packed_weights *pw, float *output, \
                               long row_begin, long row_end, float lo, float hi, float *scratch);           \
    void pa_narrow_conv_rows_##suffix(const pa_window *w, const float *filter, const float *bias, long cout, \
                                      float *output, long row_begin, long row_end, float lo, float hi);        \
    void pa_depthwise_rows_##suffix(const pa_depthwise *d, long row_begin, long row_end, long c_begin, long c_end);

PA_PATH_FUNCTIONS(portable)
#if defined(__x86_64__)
PA_PATH_FUNCTIONS(avx2)
PA_PATH_FUNCTIONS(avx512)
#endif

#endif
