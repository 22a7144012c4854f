-- expect: instruction budget of [0-9]+ exceeded
-- A loop of plain finds that scan a large string each time: each find pays per byte scanned.
return {
    fanout = function(ctx)
        local s = string.rep("a", 1 << 23)
        for _ = 1, 1e12 do
            s:find("b", 1, true)
        end
        return { 10, 25 }
    end,
}
