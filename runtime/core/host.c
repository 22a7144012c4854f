/* What this machine is (core/host.h). */
#include "core/host.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ORIGIN_BY "Measured by `halo calibrate"
#define ORIGIN_CORES " cores online) on "

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

void halo_host_origin(char *out, size_t size, const char *flags, int cores, time_t when)
{
    char host[256] = "unknown host", cpu[256], date[64] = "unknown date";
    if (gethostname(host, sizeof host - 1) != 0) {
        snprintf(host, sizeof host, "unknown host");
    }
    host[sizeof host - 1] = '\0';
    halo_host_cpu_model(cpu, sizeof cpu);
    if (cpu[0] == '\0') {
        snprintf(cpu, sizeof cpu, "unknown CPU");
    }
    struct tm tm;
    if (gmtime_r(&when, &tm) != NULL) {
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
    }
    snprintf(out, size, ORIGIN_BY "%s` on %s (%s, %d" ORIGIN_CORES "%s", flags, host, cpu,
             cores, date);
}

bool halo_host_origin_parse(const char *line, char *cpu, size_t size, time_t *when)
{
    cpu[0] = '\0';
    *when = 0;
    if (strncmp(line, "-- ", 3) == 0) {
        line += 3;
    }
    if (strncmp(line, ORIGIN_BY, strlen(ORIGIN_BY)) != 0) {
        return false;
    }
    const char *open = strstr(line, "` on ");
    open = open != NULL ? strchr(open, '(') : NULL;
    const char *tail = open != NULL ? strstr(open, ORIGIN_CORES) : NULL;
    if (tail == NULL) {
        return false;
    }
    const char *comma = tail;
    while (comma > open && *comma != ',') {
        comma--;
    }
    snprintf(cpu, size, "%.*s", (int)(comma > open ? comma - open - 1 : 0), open + 1);
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (sscanf(tail + strlen(ORIGIN_CORES), "%d-%d-%d %d:%d UTC", &tm.tm_year, &tm.tm_mon,
               &tm.tm_mday, &tm.tm_hour, &tm.tm_min) == 5) {
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        *when = timegm(&tm);
    }
    return cpu[0] != '\0';
}
