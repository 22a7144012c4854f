-- expect: hook fanout: returned an empty list
-- a returned table whose metatable would run code during validation:
-- validation reads raw fields only.
return {
    fanout = function(ctx)
        return setmetatable({}, { __index = function() while true do end end,
                                  __len = function() while true do end end })
    end,
}
