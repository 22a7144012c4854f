/* The emulated network (--netem) as plain data: its spec, parsing and the delay it charges. The
 * channel (comm/) enforces it; the simulator (sim/) models it with the same numbers. */
#ifndef HALO_NETEM_H
#define HALO_NETEM_H

#include <stdint.h>

/* An emulated network: every exchange that moves bytes between different ranks takes at least
 * lat_s + bytes * 8 / bw_bits seconds (bytes: the larger of what this rank sends and receives
 * from other ranks), the rest waited out with clock_nanosleep. Off when both are 0. */
typedef struct halo_netem {
    double lat_s;   /* one-way latency per exchange, seconds */
    double bw_bits; /* bandwidth in bits/s (0: infinite) */
} halo_netem;

/* Parses "lat=50us,bw=10Gbit" (lat units ns/us/ms/s; bw units bit/Kbit/Mbit/Gbit (x1000) or
 * B/KB/MB/GB per second; "off" = none). HALO_EUSAGE naming the bad item. */
int halo_netem_parse(const char *spec, halo_netem *out);
/* The delay netem charges for an exchange moving `bytes` (0 when netem is off or bytes is 0). */
double halo_netem_delay(const halo_netem *ne, int64_t bytes);

#endif
