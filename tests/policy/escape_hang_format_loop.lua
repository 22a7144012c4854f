-- expect: instruction budget of [0-9]+ exceeded
-- string.format of a big string in a loop: each result pays per byte.
return {
    fanout = function(ctx)
        local s = string.rep("x", 1 << 22)
        for _ = 1, 1e12 do
            string.format("%s%s", s, s)
        end
        return { 10, 25 }
    end,
}
