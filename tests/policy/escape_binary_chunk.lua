-- expect: attempt to load a binary chunk
-- load of a binary chunk: load takes text only.
return {
    fanout = function(ctx)
        local chunk = "\27LuaT\0\25\147\r\n\26\n\4\8\8xV\0\0\0\0\0\0\0\0\0\0\0(w@"
        assert(load(chunk))()
        return { 10, 25 }
    end,
}
