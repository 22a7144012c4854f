-- expect: instruction budget of [0-9]+ exceeded
-- collectgarbage() on a big heap in a loop: each full collection pays for the heap.
return {
    fanout = function(ctx)
        local keep = {}
        for i = 1, 200000 do
            keep[i] = { i }
        end
        for _ = 1, 1e12 do
            collectgarbage()
        end
        return { 10, 25 }
    end,
}
