-- expect: instruction budget of [0-9]+ exceeded
-- table.insert at the front of a big table in a loop: each insert pays for the shift.
return {
    fanout = function(ctx)
        local t = {}
        for i = 1, 1 << 20 do
            t[i] = i
        end
        for _ = 1, 1e12 do
            table.insert(t, 1, 0)
            table.remove(t, 1)
        end
        return { 10, 25 }
    end,
}
