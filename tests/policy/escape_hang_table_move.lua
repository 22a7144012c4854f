-- expect: instruction budget of [0-9]+ exceeded
-- table.move over a range of 1e15 (of nils): pays for the range before it runs.
return {
    fanout = function(ctx)
        table.move({}, 1, 1e15, 2)
        return { 10, 25 }
    end,
}
