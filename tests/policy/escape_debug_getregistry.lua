-- expect: global 'debug'
-- debug.getregistry: there is no debug library in the sandbox.
return {
    fanout = function(ctx)
        local r = debug.getregistry()
        return { 10, 25 }
    end,
}
