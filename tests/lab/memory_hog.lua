-- Broken on purpose (tests/e2e/lab.sh): grows a table until the state's memory limit, with
-- control characters in its error message (the grader must print them stripped).
local function hog()
    local t = {}
    for i = 1, 1e9 do t[i] = string.rep("x", 64) .. i end
end
return {
    name = "memory_hog",
    partition = function(g) hog() end,
    fanout = function(ctx) error("\27[31mred\nsecond line\7") end,
    cache_init = function(ctx) hog() end,
    epoch_end = function(ctx) hog() end,
    pipeline = function(ctx) hog() end,
}
