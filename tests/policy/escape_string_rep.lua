-- expect: resulting string too large|memory limit of [0-9]+ MiB exceeded
-- string.rep("x", 2^40): refused by the state's memory limit.
return {
    fanout = function(ctx)
        local s = string.rep("x", 2^40)
        return { 10, 25 }
    end,
}
