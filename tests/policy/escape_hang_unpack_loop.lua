-- expect: instruction budget of [0-9]+ exceeded
-- table.unpack of a long range in a loop: each call pays for the values it pushes.
return {
    fanout = function(ctx)
        local t = {}
        for _ = 1, 1e12 do
            select("#", table.unpack(t, 1, 900000))
        end
        return { 10, 25 }
    end,
}
