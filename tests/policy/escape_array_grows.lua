-- expect: memory limit of [0-9]+ MiB exceeded
-- halo arrays count against the memory limit too.
return {
    fanout = function(ctx)
        local t = {}
        for i = 1, 1000 do
            t[i] = halo.array("float64", 2^24)
        end
        return { 10, 25 }
    end,
}
