-- expect: binary chunks are not allowed
-- load with mode "b": refused.
return {
    fanout = function(ctx)
        load("return 1", "x", "b")
        return { 10, 25 }
    end,
}
