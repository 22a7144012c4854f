-- expect: read-only table 'string'
-- changing the string library: refused.
return {
    fanout = function(ctx)
        string.upper = function() return "pwned" end
        return { 10, 25 }
    end,
}
