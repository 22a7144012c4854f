/* The emulated network's spec and delay. */
#include "core/netem.h"

#include "core/err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Parses "<number><unit>" with a unit table; returns 0 or HALO_EUSAGE. */
static int parse_unit(const char *s, size_t len, const char *const *units, const double *mult,
                      double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) {
        return HALO_EUSAGE;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || errno != 0 || v < 0) {
        return HALO_EUSAGE;
    }
    for (int i = 0; units[i] != NULL; i++) {
        if (strcmp(end, units[i]) == 0) {
            *out = v * mult[i];
            return 0;
        }
    }
    return HALO_EUSAGE;
}

int halo_netem_parse(const char *spec, halo_netem *out)
{
    static const char *const lat_units[] = {"ns", "us", "ms", "s", NULL};
    static const double lat_mult[] = {1e-9, 1e-6, 1e-3, 1.0};
    static const char *const bw_units[] = {"bit", "Kbit", "Mbit", "Gbit", "B",
                                           "KB",  "MB",   "GB",   NULL};
    static const double bw_mult[] = {1, 1e3, 1e6, 1e9, 8, 8e3, 8e6, 8e9};
    halo_netem ne = {0, 0};
    if (spec == NULL || spec[0] == '\0' || strcmp(spec, "off") == 0) {
        *out = ne;
        return 0;
    }
    const char *p = spec;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int rc = HALO_EUSAGE;
        if (len > 4 && strncmp(p, "lat=", 4) == 0) {
            rc = parse_unit(p + 4, len - 4, lat_units, lat_mult, &ne.lat_s);
        } else if (len > 3 && strncmp(p, "bw=", 3) == 0) {
            rc = parse_unit(p + 3, len - 3, bw_units, bw_mult, &ne.bw_bits);
        }
        if (rc < 0) {
            return halo_errorf(HALO_EUSAGE,
                               "--netem: bad item '%.*s' in '%s' (want lat=50us,bw=10Gbit)",
                               (int)len, p, spec);
        }
        p += len;
        if (*p == ',') {
            p++;
        }
    }
    *out = ne;
    return 0;
}

double halo_netem_delay(const halo_netem *ne, int64_t bytes)
{
    if (bytes <= 0 || (ne->lat_s <= 0 && ne->bw_bits <= 0)) {
        return 0;
    }
    double d = ne->lat_s;
    if (ne->bw_bits > 0) {
        d += (double)bytes * 8.0 / ne->bw_bits;
    }
    return d;
}
