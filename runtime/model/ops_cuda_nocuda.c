/* Stand-in for the CUDA back end in builds without CUDA (CUDA=0): reports that GPU support was
 * not compiled in. */
#include "model/ops.h"

#include <stddef.h>

const halo_ops *halo_ops_cuda_table(void)
{
    return NULL;
}

int halo_ops_cuda_device_count(const char **why)
{
    if (why != NULL) {
        *why = "GPU support was not compiled in (built with CUDA=0)";
    }
    return 0;
}
