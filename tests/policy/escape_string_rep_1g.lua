-- expect: memory limit of [0-9]+ MiB exceeded
-- string.rep("x", 2^30): a gigabyte, refused by the state's memory limit.
return {
    fanout = function(ctx)
        local s = string.rep("x", 2^30)
        return { 10, 25 }
    end,
}
