/* What the model benchmarks share (see bench_util.h). */
#include "bench_util.h"

#include <stdint.h>
#include <stdlib.h>

int bench_parse_fanouts(const char *s, long min, int *fanout, int *layers)
{
    *layers = 0;
    while (*s != '\0' && *layers < HALO_MAX_LAYERS) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < min) {
            return -1;
        }
        fanout[(*layers)++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') {
            return -1;
        }
    }
    return *layers > 0 ? 0 : -1;
}

void bench_write_params(FILE *f, halo_model *m, int layers)
{
    size_t n;
    const float *p = halo_model_params(m, &n);
    for (int l = 0; l < layers; l++) {
        int64_t off = (int64_t)halo_model_param_offset(m, l);
        fwrite(&off, sizeof off, 1, f);
    }
    int64_t n64 = (int64_t)n;
    fwrite(&n64, sizeof n64, 1, f);
    fwrite(p, sizeof(float), n, f);
}
