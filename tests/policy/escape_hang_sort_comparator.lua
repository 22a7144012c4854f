-- expect: instruction budget of [0-9]+ exceeded
-- table.sort with a slow comparator: the comparator runs Lua code, which the hook counts.
return {
    fanout = function(ctx)
        local t = {}
        for i = 1, 100000 do
            t[i] = (i * 7919) % 100003
        end
        table.sort(t, function(a, b)
            for _ = 1, 1000 do
            end
            return a < b
        end)
        return { 10, 25 }
    end,
}
