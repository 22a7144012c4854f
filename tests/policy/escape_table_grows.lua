-- expect: memory limit of [0-9]+ MiB exceeded
-- a table that grows forever: refused by the memory limit.
return {
    fanout = function(ctx)
        local t = {}
        local i = 0
        while true do
            i = i + 1
            t[i] = { i, i, i, i }
        end
        return { 10, 25 }
    end,
}
