-- Broken on purpose (tests/e2e/lab.sh): tries to leave the sandbox from every hook.
local function escape()
    local f = io.open("/etc/passwd")        -- io is not there: an error
    return f
end
return {
    name = "escape",
    partition = function(g) os.execute("touch /tmp/halo-lab-escaped"); return {} end,
    fanout = function(ctx) escape(); return { 10, 25 } end,
    cache_init = function(ctx) require("os").exit(1) end,
    cache_batch = function(ctx, b) load(string.dump(escape))() end,
    epoch_end = function(ctx) debug.getregistry() end,
    pipeline = function(ctx) os.exit(3) end,
}
