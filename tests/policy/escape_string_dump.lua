-- expect: field 'dump'
-- string.dump: removed (binary chunks cannot be made either).
return {
    fanout = function(ctx)
        local s = string.dump(function() return 1 end)
        return { 10, 25 }
    end,
}
