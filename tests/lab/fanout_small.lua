-- A cheap fixed fanout for tests/e2e/lab.sh (lab 2 ranks it above the starter): 6,15 reaches
-- the 10,25 baseline's accuracy on the lab's graphs with about half of its sampled edges.
return {
    name = "fanout_small",
    fanout = function(ctx) return { 6, 15 } end,
}
