-- expect: instruction budget of [0-9]+ exceeded
-- string.match with many .- items and a failing end: the matcher pays per step.
return {
    fanout = function(ctx)
        local s = string.rep("ab", 20000)
        s:match(string.rep(".-", 30) .. "x")
        return { 10, 25 }
    end,
}
