-- halo_util.lua: small helpers for policies (`local util = require "halo_util"`).
local M = {}

---Rounds x to the given number of decimal digits (MassiveGNN's threshold: round(d^delta, 3)).
---@param x number
---@param digits integer
---@return number
function M.round(x, digits)
    local s = 10 ^ digits
    return math.floor(x * s + 0.5) / s
end

---Clamps x into [lo, hi].
---@param x number
---@param lo number
---@param hi number
---@return number
function M.clamp(x, lo, hi)
    return math.max(lo, math.min(hi, x))
end

---Returns a copy of defaults with the fields of overrides replaced (shallow).
---@param defaults table
---@param overrides table?
---@return table
function M.merge(defaults, overrides)
    local t = {}
    for k, v in pairs(defaults) do
        t[k] = v
    end
    for k, v in pairs(overrides or {}) do
        t[k] = v
    end
    return t
end

return M
