-- expect: collectgarbage\('stop'\) is not allowed
-- collectgarbage("stop") followed by allocation: the collector cannot be stopped.
return {
    fanout = function(ctx)
        collectgarbage("stop")
        local t = {}
        for i = 1, 1e9 do t[i] = {} end
        return { 10, 25 }
    end,
}
