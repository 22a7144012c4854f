-- Broken on purpose (tests/e2e/lab.sh): endless loops (the instruction budget stops them).
return {
    name = "endless",
    partition = function(g) while true do end end,
    fanout = function(ctx) while true do end end,
    cache_init = function(ctx) while true do end end,
    cache_batch = function(ctx, b) while true do end end,
}
