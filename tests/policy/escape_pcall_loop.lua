-- expect: instruction budget of [0-9]+ exceeded
-- catching the budget error with pcall does not help: it fires again at once.
return {
    fanout = function(ctx)
        while true do
            pcall(function() while true do end end)
        end
        return { 10, 25 }
    end,
}
