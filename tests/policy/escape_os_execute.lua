-- expect: global 'os'
-- os.execute: there is no os library in the sandbox.
return {
    fanout = function(ctx)
        os.execute("touch /tmp/halo-escaped")
        return { 10, 25 }
    end,
}
