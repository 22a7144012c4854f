/* What this machine is: the CPU model a profile or a figure names. */
#ifndef HALO_HOST_H
#define HALO_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* The "model name" of /proc/cpuinfo into out, cut at a quote or a backslash (it goes into JSON
 * and Lua comments as is); "" when unknown. */
void halo_host_cpu_model(char *out, size_t size);

/* Where and when a profile was measured, the first line of what halo calibrate writes:
 * "Measured by `halo calibrate FLAGS` on HOST (CPU, N cores online) on YYYY-MM-DD HH:MM UTC"
 * (flags "" or " --quick"; no final period) into out, for this host, its cores and `when`. */
void halo_host_origin(char *out, size_t size, const char *flags, int cores, time_t when);
/* Reads such a line (after a Lua comment's "-- ", if any): the CPU into cpu and the time into
 * *when (0 when the date does not parse). False when the line is not one, or names no CPU. */
bool halo_host_origin_parse(const char *line, char *cpu, size_t size, time_t *when);

#endif
