-- expect: instruction budget of [0-9]+ exceeded
-- string.rep("", 1e15) loops 1e15 times inside C with no memory to refuse: pays for the count.
return {
    fanout = function(ctx)
        string.rep("", 1e15)
        return { 10, 25 }
    end,
}
