-- expect: global 'dofile'
-- dofile: removed.
return {
    fanout = function(ctx)
        dofile("/etc/passwd")
        return { 10, 25 }
    end,
}
