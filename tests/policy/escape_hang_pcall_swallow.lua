-- expect: instruction budget of [0-9]+ exceeded
-- pcall around a backtracking find in a loop: the error comes back at the next instruction.
return {
    fanout = function(ctx)
        local s = string.rep("a", 50000)
        local p = string.rep("a-", 40) .. "b"
        while true do
            pcall(string.find, s, p)
        end
        return { 10, 25 }
    end,
}
