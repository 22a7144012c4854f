/* The AUTO rule that picks a layer's order of work (lin-first or agg-first) from its shape: a
 * pure function with no back end, so the simulator links it without the model's kernels. */
#include "model/model.h"

/* Cost of one gathered float of the aggregation in GEMM FLOP (measured order of magnitude). */
#define MODEL_GATHER_COST 32.0

bool halo_model_lin_first(double num_edges, double num_dst, double num_src, double in, double out,
                          bool need_dx)
{
    double e = num_edges, nd = num_dst, ns = num_src;
    double g = MODEL_GATHER_COST, mm = 2.0 * in * out;
    double agg_first = g * e * in + 2.0 * nd * mm + 2.0 * nd * mm;
    double lin_first = g * e * out + (ns + nd) * mm + g * e * out + (ns + nd) * mm;
    if (need_dx) {
        agg_first += 2.0 * nd * mm + g * e * in;
        lin_first += (ns + nd) * mm;
    }
    return lin_first < agg_first;
}
