-- expect: instruction budget of [0-9]+ exceeded
-- A halo array method over a big array in a loop: each call pays per element.
return {
    fanout = function(ctx)
        local a = halo.array("float64", 1 << 20, 1)
        for _ = 1, 1e12 do
            a:sum()
        end
        return { 10, 25 }
    end,
}
