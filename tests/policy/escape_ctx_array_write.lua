-- expect: ctx.halo.ids is read-only
-- writing to a read-only context array: refused.
return {
    fanout = function(ctx)
        ctx.halo.ids:fill(0)
        return { 10, 25 }
    end,
}
