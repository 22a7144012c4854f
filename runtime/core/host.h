/* What this machine is: the CPU model a profile or a figure names. */
#ifndef HALO_HOST_H
#define HALO_HOST_H

#include <stddef.h>

/* The "model name" of /proc/cpuinfo into out, cut at a quote or a backslash (it goes into JSON
 * and Lua comments as is); "" when unknown. */
void halo_host_cpu_model(char *out, size_t size);

#endif
