// OpenBLAS's CBLAS interface plus openblas_set_num_threads / openblas_get_num_threads.
#include <cblas.h>
