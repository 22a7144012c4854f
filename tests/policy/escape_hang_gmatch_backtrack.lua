-- expect: instruction budget of [0-9]+ exceeded
-- string.gmatch with a backtracking pattern: each iteration pays for its steps.
return {
    fanout = function(ctx)
        local s = string.rep("a", 40000)
        for _ in s:gmatch(string.rep("a*", 30) .. "b") do
        end
        return { 10, 25 }
    end,
}
