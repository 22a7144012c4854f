-- expect: instruction budget of [0-9]+ exceeded
-- while true do end: stopped by the instruction budget.
return {
    fanout = function(ctx)
        while true do end
        return { 10, 25 }
    end,
}
