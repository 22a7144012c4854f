-- expect: attempt to index a boolean value
-- reaching the string metatable: getmetatable("") is false.
return {
    fanout = function(ctx)
        getmetatable("").__index = { upper = function() return "pwned" end }
        return { 10, 25 }
    end,
}
