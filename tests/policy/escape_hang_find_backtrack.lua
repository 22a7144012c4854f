-- expect: instruction budget of [0-9]+ exceeded
-- string.find with a backtracking pattern on a long subject: the matcher pays per step.
return {
    fanout = function(ctx)
        local s = string.rep("a", 50000)
        string.find(s, string.rep("a-", 40) .. "b")
        return { 10, 25 }
    end,
}
