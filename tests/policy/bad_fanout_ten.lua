-- bad_fanout_ten.lua: returns a fanout of "ten"; validation names the hook and the layer.
return {
    fanout = function(ctx)
        return { "ten", 25 }
    end,
}
