-- expect: instruction budget of [0-9]+ exceeded
-- utf8.len over a big string in a loop: each call pays per byte scanned.
return {
    fanout = function(ctx)
        local s = string.rep("\u{e9}", 1 << 20)
        for _ = 1, 1e12 do
            utf8.len(s)
        end
        return { 10, 25 }
    end,
}
