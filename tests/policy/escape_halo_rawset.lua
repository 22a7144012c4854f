-- expect: read-only in the sandbox
-- rawset on the halo module: refused.
return {
    fanout = function(ctx)
        rawset(halo, "array", print)
        return { 10, 25 }
    end,
}
