-- expect: instruction budget of [0-9]+ exceeded
-- The .. operator on a big string in a loop: one instruction copies 16 MiB; the allocation pays.
return {
    fanout = function(ctx)
        local s = string.rep("x", 1 << 24)
        for _ = 1, 1e12 do
            local _ = s .. "y"
        end
        return { 10, 25 }
    end,
}
