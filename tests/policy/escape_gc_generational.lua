-- expect: collectgarbage\('generational'\) is not allowed
-- switching the collector mode: refused.
return {
    fanout = function(ctx)
        collectgarbage("generational")
        return { 10, 25 }
    end,
}
