/* What this machine is (core/host.h). */
#include "core/host.h"

#include <stdio.h>
#include <string.h>

void halo_host_cpu_model(char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        const char *c = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && c != NULL) {
            c += strspn(c + 1, " \t") + 1;
            snprintf(out, size, "%.*s", (int)strcspn(c, "\r\n\"\\"), c);
            break;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
}
