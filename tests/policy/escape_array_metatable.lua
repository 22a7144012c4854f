-- expect: attempt to index a boolean value
-- reaching the array metatable: hidden.
return {
    fanout = function(ctx)
        getmetatable(halo.array("int32", 1)).__index.sum = nil
        return { 10, 25 }
    end,
}
