-- Broken on purpose (tests/e2e/lab.sh): a pattern search that backtracks for ages inside one
-- C call (string.find: each ".-" retries every length, about n^4 steps for n = 20000). The
-- sandbox's matcher charges each step to the instruction budget, so the test grades it with a
-- budget too large to matter: then only a wall clock stops it (the grader's, set lower than
-- the sandbox's own 5 s per call).
local s = string.rep("a", 20000)
local function slow()
    return string.find(s, ".-.-.-.-b")
end
return {
    name = "loop_string_find",
    partition = function(g) slow(); return { method = "metis" } end,
    fanout = function(ctx) slow(); return { 10, 25 } end,
    cache_init = function(ctx) slow(); return { capacity = 0 } end,
    cache_batch = function(ctx, b) slow(); return nil end,
}
