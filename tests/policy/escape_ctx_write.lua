-- expect: ctx is read-only
-- writing to the context: refused.
return {
    fanout = function(ctx)
        ctx.rank = 7
        return { 10, 25 }
    end,
}
