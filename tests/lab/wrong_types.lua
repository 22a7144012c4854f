-- Broken on purpose (tests/e2e/lab.sh): every hook returns the wrong type.
return {
    name = "wrong_types",
    partition = function(g) return { method = 42, parts = "four" } end,
    fanout = function(ctx) return { "ten", {} } end,
    cache_init = function(ctx) return { capacity = "all" } end,
    cache_batch = function(ctx, b) return { evict = "everything" } end,
    epoch_end = function(ctx) return 17 end,
}
