-- expect: instruction budget of [0-9]+ exceeded
-- table.concat of big strings in a loop: each result pays per byte.
return {
    fanout = function(ctx)
        local t = {}
        for i = 1, 10 do
            t[i] = string.rep("x", 1 << 20)
        end
        for _ = 1, 1e12 do
            table.concat(t, ",")
        end
        return { 10, 25 }
    end,
}
