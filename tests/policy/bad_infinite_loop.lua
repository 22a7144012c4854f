-- bad_infinite_loop.lua: a hook that never returns; the instruction budget stops it.
return {
    pipeline = function(ctx)
        local n = 0
        while true do
            n = n + 1
        end
    end,
}
