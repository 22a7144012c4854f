/* Finds and loads the CUDA back end (lib/halo/libhalo_cuda.so) with dlopen, only when a run asks
 * for a GPU: a CPU run never maps the CUDA libraries (docs/model.md, "The CUDA back end"). */
#include "core/err.h"
#include "model/ops.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where the back end lies relative to the executable (bin/halo -> lib/halo/). */
#define CUDA_LIB_REL "/../lib/halo/libhalo_cuda.so"

/* The outcome of the one load attempt of this process. */
static struct {
    pthread_once_t once;                 /* the load runs once */
    const halo_ops_cuda_plugin *plugin;  /* the loaded back end, or NULL */
    char why[PATH_MAX + 512];            /* why there is none (one line) */
    char path[PATH_MAX];                 /* the file loaded or tried */
} g_cuda = {.once = PTHREAD_ONCE_INIT};

/* Copies a message into g_cuda.why as one line (dlerror texts may hold newlines). */
static void set_why(const char *fmt, const char *a, const char *b)
{
    snprintf(g_cuda.why, sizeof g_cuda.why, fmt, a, b != NULL ? b : "");
    for (char *c = g_cuda.why; *c != '\0'; c++) {
        if (*c == '\n' || *c == '\r') {
            *c = ' ';
        }
    }
}

/* The file to load into path: $HALO_CUDA_LIB, else beside the executable (../lib/halo), else the
 * build tree's (test and bench binaries live under build/); when neither exists, the one beside
 * the executable (where `make install` puts it). 0, or -1 when this build has no GPU support. */
static int cuda_lib_path(char *path, size_t cap)
{
    const char *env = getenv("HALO_CUDA_LIB");
    if (env != NULL && env[0] != '\0') {
        snprintf(path, cap, "%s", env);
        return 0;
    }
#ifndef HALO_HAVE_CUDA
    snprintf(path, cap, "(none: built with CUDA=0)");
    return -1;
#else
    char exe[PATH_MAX - 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (slash != NULL) {
        *slash = '\0';
        snprintf(path, cap, "%s%s", exe, CUDA_LIB_REL);
        if (access(path, F_OK) == 0) {
            return 0;
        }
    }
    if (access(HALO_ROOT "/lib/halo/libhalo_cuda.so", F_OK) == 0 || slash == NULL) {
        snprintf(path, cap, "%s", HALO_ROOT "/lib/halo/libhalo_cuda.so");
    }
    return 0;
#endif
}

/* Whether an NVIDIA driver is present, without loading any CUDA library. */
static int driver_present(void)
{
    return access("/proc/driver/nvidia/version", F_OK) == 0 || access("/dev/nvidiactl", F_OK) == 0;
}

/* dlopen and check of the back end (once per process). */
static void cuda_load(void)
{
    if (cuda_lib_path(g_cuda.path, sizeof g_cuda.path) < 0) {
        set_why("%sGPU support was not compiled in (built with CUDA=0)%s", "", "");
        return;
    }
    void *h = dlopen(g_cuda.path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        /* dlerror names the file in most cases; say which file when it does not */
        set_why(strstr(e, g_cuda.path) != NULL ? "cannot load the CUDA back end: %s%s"
                                               : "cannot load the CUDA back end: %s (%s)",
                e, strstr(e, g_cuda.path) != NULL ? "" : g_cuda.path);
        return;
    }
    const halo_ops_cuda_plugin *pl = dlsym(h, HALO_OPS_CUDA_SYMBOL);
    if (pl == NULL) {
        set_why("%s: not a halo CUDA back end (no symbol " HALO_OPS_CUDA_SYMBOL ")%s",
                g_cuda.path, "");
        dlclose(h);
        return;
    }
    if (pl->abi != HALO_OPS_CUDA_ABI || pl->ops_size != sizeof(halo_ops) || pl->ops == NULL ||
        pl->device_count == NULL) {
        set_why("%s: a CUDA back end of another halo version (rebuild it with make)%s",
                g_cuda.path, "");
        dlclose(h);
        return;
    }
    g_cuda.plugin = pl; /* never closed: its kernels stay registered until exit */
}

/* Loads the back end unless the driver probe says there is no GPU to use (skipped when
 * HALO_CUDA_LIB names a back end explicitly). NULL with *why set when there is none. */
static const halo_ops_cuda_plugin *plugin_get(const char **why)
{
    const char *env = getenv("HALO_CUDA_LIB");
    if ((env == NULL || env[0] == '\0') && !driver_present()) {
#ifndef HALO_HAVE_CUDA
        *why = "GPU support was not compiled in (built with CUDA=0)";
#else
        static __thread char msg[PATH_MAX + 128];
        char path[PATH_MAX];
        (void)cuda_lib_path(path, sizeof path);
        snprintf(msg, sizeof msg, "no NVIDIA driver (/proc/driver/nvidia/version missing), %s "
                 "not loaded", path);
        *why = msg;
#endif
        return NULL;
    }
    (void)pthread_once(&g_cuda.once, cuda_load);
    if (g_cuda.plugin == NULL) {
        *why = g_cuda.why;
    }
    return g_cuda.plugin;
}

const halo_ops *halo_ops_cuda_table(void)
{
    const char *why = NULL;
    const halo_ops_cuda_plugin *pl = plugin_get(&why);
    return pl != NULL ? pl->ops : NULL;
}

int halo_ops_cuda_device_count(const char **why)
{
    const char *w = NULL;
    const halo_ops_cuda_plugin *pl = plugin_get(&w);
    if (pl == NULL) {
        if (why != NULL) {
            *why = w;
        }
        return 0;
    }
    return pl->device_count(why);
}

int halo_ops_cuda_loaded(void)
{
    return g_cuda.plugin != NULL;
}
