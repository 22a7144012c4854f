-- expect: protected metatable
-- changing the halo module's metatable: refused.
return {
    fanout = function(ctx)
        setmetatable(halo, {})
        return { 10, 25 }
    end,
}
