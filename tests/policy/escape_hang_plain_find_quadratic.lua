-- expect: instruction budget of [0-9]+ exceeded
-- One plain find whose needle almost matches at every position (quadratic): pays per comparison.
return {
    fanout = function(ctx)
        local s = string.rep("a", 1 << 22)
        s:find(string.rep("a", 1 << 16) .. "b", 1, true)
        return { 10, 25 }
    end,
}
