-- expect: stack overflow
-- unbounded recursion: Lua's stack limit.
return {
    fanout = function(ctx)
        local function f(n) return 1 + f(n + 1) end
        f(1)
        return { 10, 25 }
    end,
}
