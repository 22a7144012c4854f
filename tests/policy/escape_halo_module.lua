-- expect: read-only table 'halo'
-- replacing a function of the halo module: refused.
return {
    fanout = function(ctx)
        halo.array = function() return nil end
        return { 10, 25 }
    end,
}
