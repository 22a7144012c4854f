-- expect: global 'package'
-- package.loadlib: there is no package library in the sandbox.
return {
    fanout = function(ctx)
        package.loadlib("libc.so.6", "system")
        return { 10, 25 }
    end,
}
