/* Where a policy named on the command line lives: the file as given, or policies/NAME.lua in the
 * working directory, the installed share/halo, or the source tree halo was built from. */
#include "cli/cli.h"

#include "core/fs.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef HALO_ROOT
#define HALO_ROOT "."
#endif

/* PREFIX/share/halo beside an installed PREFIX/bin/halo, or "" when halo's path is unknown. */
static void share_dir(char *out, size_t size)
{
    char exe[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = '\0';
    if (n <= 0) {
        return;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash != NULL) {
        *slash = '\0'; /* PREFIX/bin */
        snprintf(out, size, "%s/../share/halo", exe);
    }
}

const char *halo_cli_policy_path(const char *arg, char *buf, size_t size)
{
    if (arg == NULL || strchr(arg, '/') != NULL || strstr(arg, ".lua") != NULL ||
        halo_path_exists(arg)) {
        return arg; /* a path: used as given (the loader names it when it is missing) */
    }
    char share[2100];
    share_dir(share, sizeof share);
    const char *roots[] = {".", share, HALO_ROOT, "/usr/local/share/halo"};
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
        if (roots[i][0] == '\0') {
            continue;
        }
        snprintf(buf, size, "%s/policies/%s.lua", roots[i], arg);
        if (halo_path_exists(buf)) {
            return buf;
        }
    }
    return arg; /* the loader's error names what was given */
}
