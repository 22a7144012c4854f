-- expect: module '../../../etc/passwd' not found
-- require with a path: module names are plain names.
return {
    fanout = function(ctx)
        require "../../../etc/passwd"
        return { 10, 25 }
    end,
}
