-- expect: instruction budget of [0-9]+ exceeded
-- calls with negative lengths (caught with pcall) cannot buy instructions back.
return {
    fanout = function(ctx)
        for _ = 1, 100 do
            pcall(halo.range, -2^62)
            pcall(halo.array, "int32", -2^62)
        end
        while true do end
    end,
}
