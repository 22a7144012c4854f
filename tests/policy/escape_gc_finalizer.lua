-- expect: __gc metamethods are not allowed
-- a finalizer would run outside any hook call (no budget there): refused.
return {
    fanout = function(ctx)
        setmetatable({}, { __gc = function() while true do end end })
        return { 10, 25 }
    end,
}
