-- expect: module 'os' not found
-- require "os": require finds only halo's modules and the policy's neighbours.
return {
    fanout = function(ctx)
        local os = require "os"
        os.exit(1)
        return { 10, 25 }
    end,
}
