/* Benchmark of the asynchronous mini-batch pipeline (DistDGLv2): epoch time of `halo train` at
 * depths 0, 1, 2 and 4 on a products-like graph with 4 ranks, without and with an emulated
 * network (--netem); the ratio depth 0 / depth 4 with the network is the DistDGLv2 speedup at
 * this scale (goal >= 1.5x where the network dominates), measured in the same run. Also the
 * share of the preparation (sample + fetch) and of the fetch alone hidden behind the compute.
 * Starts bin/halo under mpirun. Environment: HALO_BIN (bin/halo), HALO_BENCH_PIPE_SCALE (0.02),
 * HALO_BENCH_PIPE_NETEM (lat=2ms,bw=1Gbit), HALO_BENCH_PIPE_PNG (draw the depth-4 timeline of
 * the emulated network into this PNG). */
#include "core/err.h"
#include "core/fs.h"
#include "core/json.h"
#include "core/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Means over ranks and the epochs after the first (warm-up) of one run's metrics. */
typedef struct run_stats {
    double epoch_s;  /* epoch time (slowest rank) */
    double sample_s; /* sampling per rank */
    double fetch_s;  /* feature pulls per rank */
    double wait_s;   /* trainer waiting for the pipeline per rank */
    double bytes;    /* remote bytes per rank and epoch */
} run_stats;

static int sh(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0) {
        fprintf(stderr, "bench_pipe: failed (%d): %s\n", rc, cmd);
    }
    return rc;
}

/* Reads the epoch records of a metrics file into s. */
static int read_metrics(const char *path, run_stats *s)
{
    char *text = NULL;
    size_t len = 0;
    HALO_CHECK(halo_file_read_all(path, &text, &len));
    memset(s, 0, sizeof *s);
    double tmax[64] = {0};
    int nrec = 0, maxep = 0;
    char *line = text;
    while (line != NULL && *line != '\0') {
        char *nl = strchr(line, '\n');
        size_t n = nl != NULL ? (size_t)(nl - line) : strlen(line);
        halo_json *j = NULL;
        const char *type = NULL;
        int64_t ep = 0;
        if (n > 0 && halo_json_parse(line, n, path, &j) == 0 &&
            halo_json_get_str(j, "type", path, &type) == 0 && strcmp(type, "epoch") == 0 &&
            halo_json_get_i64(j, "epoch", path, &ep) == 0 && ep >= 1 && ep < 64) {
            double t, sa, fe, wa, by;
            halo_json_get_f64(j, "time_s", path, &t);
            halo_json_get_f64(j, "sample_s", path, &sa);
            halo_json_get_f64(j, "fetch_s", path, &fe);
            halo_json_get_f64(j, "wait_s", path, &wa);
            halo_json_get_f64(j, "bytes_remote", path, &by);
            tmax[ep] = t > tmax[ep] ? t : tmax[ep];
            s->sample_s += sa;
            s->fetch_s += fe;
            s->wait_s += wa;
            s->bytes += by;
            nrec++;
            maxep = (int)ep > maxep ? (int)ep : maxep;
        }
        halo_json_free(j);
        line = nl != NULL ? nl + 1 : NULL;
    }
    halo_free(text);
    if (nrec == 0 || maxep < 1) {
        return halo_errorf(HALO_EINPUT, "%s: no epoch records after the first", path);
    }
    for (int e = 1; e <= maxep; e++) {
        s->epoch_s += tmax[e] / maxep;
    }
    s->sample_s /= nrec;
    s->fetch_s /= nrec;
    s->wait_s /= nrec;
    s->bytes /= nrec;
    return 0;
}

/* The "hidden" column of `halo timeline` for the fetch stage (-1 when not found). */
static double fetch_hidden(const char *bin, const char *tl, const char *png)
{
    char cmd[8192];
    if (png != NULL) {
        snprintf(cmd, sizeof cmd, "%s timeline %s --epoch 1 -o %s", bin, tl, png);
    } else {
        snprintf(cmd, sizeof cmd, "%s timeline %s --epoch 1 --script /dev/null", bin, tl);
    }
    FILE *p = popen(cmd, "r");
    if (p == NULL) {
        return -1;
    }
    char line[512];
    double h = -1, busy;
    while (fgets(line, sizeof line, p) != NULL) {
        if (sscanf(line, " fetch %lf %lf%%", &busy, &h) == 2) {
            break;
        }
    }
    while (fgets(line, sizeof line, p) != NULL) {
    }
    pclose(p);
    return h;
}

int main(void)
{
    const char *bin = getenv("HALO_BIN") ? getenv("HALO_BIN") : "bin/halo";
    const char *scale = getenv("HALO_BENCH_PIPE_SCALE") ? getenv("HALO_BENCH_PIPE_SCALE") : "0.02";
    const char *netem = getenv("HALO_BENCH_PIPE_NETEM") ? getenv("HALO_BENCH_PIPE_NETEM")
                                                        : "lat=2ms,bw=1Gbit";
    const char *png = getenv("HALO_BENCH_PIPE_PNG");
    char dir[] = "/tmp/halo-bench-pipe-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        return 1;
    }
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "%s -q gen --preset products --scale %s -o %s/g >/dev/null && "
             "%s -q partition %s/g --parts 4 -o %s/p >/dev/null",
             bin, scale, dir, bin, dir, dir);
    if (sh(cmd) != 0) {
        return 1;
    }
    printf("halo train, products-like x%s, 4 ranks, batch 64, fanouts 10,25, 4 epochs (the "
           "first is warm-up), CPU\n", scale);
    printf("hidden = 1 - wait / (sample + fetch): the share of the preparation the trainer did "
           "not wait for\n");
    static const int depths[] = {0, 1, 2, 4};
    const char *nets[2] = {"off", netem};
    double ratio[2] = {0, 0}, fh = -1;
    int status = 0;
    for (int k = 0; k < 2; k++) {
        printf("\nnetwork: %s\n  %5s %9s %9s %9s %9s %8s %8s %12s\n", nets[k], "depth", "epoch_s",
               "sample_s", "fetch_s", "wait_s", "hidden", "speedup", "remote_MB");
        double t0 = 0;
        for (int i = 0; i < 4; i++) {
            int d = depths[i];
            char tl[4300] = "";
            if (k == 1 && d == 4) {
                snprintf(tl, sizeof tl, "--timeline %s/tl.jsonl", dir);
            }
            snprintf(cmd, sizeof cmd,
                     "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 600 "
                     "mpirun --oversubscribe --bind-to none -np 4 %s -q train %s/p --epochs 4 "
                     "--batch 64 --fanouts 10,25 --eval none --no-table --depth %d --netem %s "
                     "--metrics %s/m.jsonl %s >/dev/null",
                     bin, dir, d, nets[k], dir, tl);
            run_stats s;
            char path[4300];
            snprintf(path, sizeof path, "%s/m.jsonl", dir);
            if (sh(cmd) != 0 || read_metrics(path, &s) != 0) {
                fprintf(stderr, "bench_pipe: depth %d, network %s: %s\n", d, nets[k],
                        halo_errmsg());
                status = 1;
                continue;
            }
            if (d == 0) {
                t0 = s.epoch_s;
            }
            double prep = s.sample_s + s.fetch_s;
            double hidden = d == 0 || prep <= 0 ? 0 : 1 - s.wait_s / prep;
            printf("  %5d %9.3f %9.3f %9.3f %9.3f %7.1f%% %7.2fx %12.1f\n", d, s.epoch_s,
                   s.sample_s, s.fetch_s, s.wait_s, 100 * hidden,
                   s.epoch_s > 0 ? t0 / s.epoch_s : 0, s.bytes / 1e6);
            if (d == 4) {
                ratio[k] = s.epoch_s > 0 ? t0 / s.epoch_s : 0;
            }
            fflush(stdout);
        }
    }
    char tlpath[4300];
    snprintf(tlpath, sizeof tlpath, "%s/tl.jsonl", dir);
    if (halo_path_exists(tlpath)) {
        fh = fetch_hidden(bin, tlpath, png);
    }
    printf("\nspeedup depth 0 / depth 4: %.2fx without netem, %.2fx with netem %s "
           "(DistDGLv2 at this scale; goal >= 1.5x where the network dominates)\n",
           ratio[0], ratio[1], netem);
    if (fh >= 0) {
        printf("fetch time hidden behind compute + allreduce at depth 4 with netem: %.1f%% "
               "(halo timeline, epoch 1)%s%s\n", fh, png != NULL ? "; chart: " : "",
               png != NULL ? png : "");
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
    return status;
}
