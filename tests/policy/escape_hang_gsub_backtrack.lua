-- expect: instruction budget of [0-9]+ exceeded
-- string.gsub with a backtracking pattern: the matcher pays per step.
return {
    fanout = function(ctx)
        local s = string.rep("a", 40000)
        s:gsub(string.rep("a?", 30) .. string.rep("a", 30) .. "c", "x")
        return { 10, 25 }
    end,
}
