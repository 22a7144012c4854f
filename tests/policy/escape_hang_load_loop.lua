-- expect: instruction budget of [0-9]+ exceeded
-- load() of a big chunk in a loop: compiling pays per byte.
return {
    fanout = function(ctx)
        local src = "return " .. string.rep("1+", 1 << 20) .. "1"
        for _ = 1, 1e12 do
            load(src)
        end
        return { 10, 25 }
    end,
}
