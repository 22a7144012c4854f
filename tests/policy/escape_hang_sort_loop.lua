-- expect: instruction budget of [0-9]+ exceeded
-- A loop of table.sort over a big table with the default order: each sort pays n log n.
return {
    fanout = function(ctx)
        local t = {}
        for i = 1, 1 << 20 do
            t[i] = i
        end
        for _ = 1, 1e12 do
            table.sort(t)
        end
        return { 10, 25 }
    end,
}
