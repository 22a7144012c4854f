/* Policy engine, names: the texts every other file of the engine prints (the hook names, the
 * policy's name, the time-limit message). It uses nothing of the engine, so the files above it
 * never lean on each other for them. */
#include "policy/internal.h"

#include <stdio.h>

static const char *const hook_names[HALO_POLICY_NHOOKS] = {
    "partition", "fanout", "pipeline", "cache_init", "cache_batch", "epoch_end",
};

const char *halo_policy_hook_name(int hook)
{
    return hook >= 0 && hook < HALO_POLICY_NHOOKS ? hook_names[hook] : NULL;
}

const char *halo_policy_name(const halo_policy *pol)
{
    return pol->name;
}

const char *halo_policy_time_text(const halo_policy *p, char *buf, size_t size)
{
    snprintf(buf, size, "wall-clock limit of %g s per call exceeded", p->time_limit);
    return buf;
}
