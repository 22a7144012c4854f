-- Lab 2 starter: fanout(ctx) for `halo lab check 2` / `halo lab grade 2`.
-- It runs and scores low: wide fixed fanouts reach the accuracy target but sample more edges
-- than the 10,25 baseline. Fanouts are listed input layer first (DGL order). ctx.epoch,
-- ctx.epochs and ctx.last_epoch (loss, sampled_edges, ...) are there to adapt with.
return {
    name = "lab2-starter",

    fanout = function(ctx)
        return { 15, 25 }
    end,
}
