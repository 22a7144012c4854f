-- bad_os_execute.lua: calls os.execute inside a hook; the sandbox has no os library.
return {
    fanout = function(ctx)
        os.execute("touch /tmp/halo-policy-escaped")
        return { 10, 25 }
    end,
}
