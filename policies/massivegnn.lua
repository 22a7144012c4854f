-- massivegnn.lua: MassiveGNN's prefetch and eviction (Sarkar et al., arXiv 2410.22697) on top of
-- DistDGL's choices, as the authors' code computes them (docs/massivegnn.md).
--
-- Buffer: k = floor(f * |H|) slots, filled with the k halo nodes of highest in-degree
-- (init = "degree") or with k random ones (init = "random": the k highest keys
-- mix(mix(seed) xor rank << 32 xor position) >> 11, mix = splitmix64; ties to the lower position).
-- Scores: S_E per slot (ctx.cache.score, starts at 1), S_N per halo node (ctx.halo.score,
-- starts at 0; -1 while the node is buffered). Every batch S_E decays by d = 1 - alpha and a
-- hit undoes the decay; missed halo nodes gain S_N += 1. Every delta-th batch, counted from 1
-- ((b.step + 1) % delta == 0), the slots with S_E < T = round(d^delta, 3) (rounded from the
-- double's exact value, as Python's round does) are replaced, in ascending node id, by the
-- halo nodes of highest S_N > 0 (ties: the lower position; ties = "high" or "random" take
-- other orders, to measure what the order changes). alpha = 0 and delta = 0 give a
-- static buffer. Scores are float32, as in the authors' code: d = float32(1 - alpha), every
-- update rounded to float32 (round_f32), T rounded to float32 for the compare (at alpha 0.1,
-- delta 2: 0.9f * 0.9f = 0.80999994 < float32(0.81), so an unhit slot is evicted).
-- No per-node Lua (but for the once-per-run random fill and ties = "random"): every step below
-- is one vector method over a whole array.
local halo = require "halo"

local distdgl_partition = { method = "metis", constraints = { "nodes", "train", "edges" },
                            imbalance = 1.03, objective = "cut" }

-- splitmix64 (Lua integers wrap around on 64 bits; >> is a logical shift)
local function mix(z)
    z = z + 0x9e3779b97f4a7c15
    z = (z ~ (z >> 30)) * 0xbf58476d1ce4e5b9
    z = (z ~ (z >> 27)) * 0x94d049bb133111eb
    return z ~ (z >> 31)
end

-- T = round(d^delta, 3) as Python computes it: from the exact value of the double (0.95^2 is
-- 0.90249999999999997 as a double, so T = 0.902), which "%.3f" also rounds from
local function threshold(d, delta)
    return tonumber(string.format("%.3f", d ^ delta))
end

-- The order in which equal scores are taken, as a permutation of 0..m-1 (nil: the lower
-- position first). ties = "high": the higher position first; "random": a hashed order per
-- (seed, rank, salt). The authors' numpy argsort(-scores) and torch.topk leave ties in an order
-- fixed by the scores but not by position; these two bound its effect (docs/massivegnn.md).
local function tie_order(p, rank, m, salt)
    if p.ties == "low" then
        return nil
    elseif p.ties == "high" then
        return halo.range(m):scale(-1):add(m - 1)
    elseif p.ties == "random" then
        local key = halo.array("float64", m)
        local s0 = mix(mix(p.seed) ~ (rank << 32) ~ salt)
        for i = 0, m - 1 do
            key:set(i, (mix(s0 ~ i) >> 11) + 0.0)
        end
        return key:argsort()
    end
    error("ties must be \"low\", \"high\" or \"random\", got " .. tostring(p.ties))
end

-- Positions of the k largest values of a, equal values taken in tie_order's order.
local function top_positions(a, k, p, rank, salt)
    local ord = tie_order(p, rank, a:len(), salt)
    if ord == nil then
        local _, top = a:topk(k)
        return top
    end
    local _, top = a:gather(ord):topk(k)
    return ord:gather(top)
end

return {
    name = "massivegnn",
    description = "MassiveGNN: degree-prefetched halo buffer with scored continuous eviction",
    params = { f = 0.25, alpha = 0.05, delta = 25, init = "degree", seed = 1, ties = "low",
               fanout_in = 10, fanout_out = 25 },

    partition = function(g)
        return distdgl_partition
    end,

    fanout = function(ctx)
        return { ctx.params.fanout_in, ctx.params.fanout_out }
    end,

    -- One batch ahead: sampling and the buffer lookup of batch i+1 overlap batch i.
    pipeline = function(ctx)
        return { depth = 1, sampler_threads = 1 }
    end,

    cache_init = function(ctx)
        local p, n = ctx.params, ctx.halo.n
        local k = math.floor(p.f * n)
        local key
        if p.init == "degree" then
            key = ctx.halo.deg
        elseif p.init == "random" then
            -- once per run (not per batch): a key per halo node from a counter-based hash
            key = halo.array("float64", n)
            local s0 = mix(p.seed) ~ (ctx.rank << 32)
            for i = 0, n - 1 do
                key:set(i, (mix(s0 ~ i) >> 11) + 0.0)
            end
        else
            error("init must be \"degree\" or \"random\", got " .. tostring(p.init))
        end
        local top = top_positions(key, k, p, ctx.rank, 0)   -- positions of the k highest keys
        local SN = ctx.halo.score
        SN:fill(0)
        SN:set_at(top, -1)                         -- buffered nodes are marked -1
        return { capacity = k, ids = ctx.halo.ids:gather(top), score = 1.0 }
    end,

    cache_batch = function(ctx, b)
        local p = ctx.params
        if p.alpha == 0 and p.delta == 0 then
            return nil                             -- static buffer
        end
        local d = halo.f32(1 - p.alpha)           -- np.float32(1 - alpha)
        local SE, SN = ctx.cache.score, ctx.halo.score
        SE:scale(d):round_f32()                    -- every slot decays ...
        SE:div_at(b.hit_slots, d):round_f32()      -- ... a hit undoes it (/= d), in float32
        if p.delta > 0 and (b.step + 1) % p.delta == 0 then
            -- T from the double 1 - alpha (Python's round), compared in float32
            local T = halo.f32(threshold(1 - p.alpha, p.delta))
            local E = SE:lt(T):where()             -- candidate slots
            if E:len() > 0 then
                local cand = SN:gt(0):where()     -- replacements: S_N > 0, highest first,
                local top = top_positions(SN:gather(cand), E:len(), p, ctx.rank, b.step + 1)
                local R = cand:gather(top)         -- (ties: the lower position by default)
                if R:len() == 0 then
                    return nil
                end
                local pos = ctx.cache.pos          -- (nil where the caller gives no map)
                local out = pos and pos:gather(E) or ctx.halo.ids:search(ctx.cache.id:gather(E))
                local ord = out:argsort()          -- candidates in ascending node id (halo
                E = E:gather(ord):slice(0, R:len()) -- positions follow the sorted ids)
                out = out:gather(ord):slice(0, R:len())
                SN:set_at(out, SE:gather(E))       -- evicted nodes keep their score as S_N
                SE:set_at(E, SN:gather(R))         -- admitted nodes start with their miss count
                SN:set_at(R, -1)
                return { evict = E, admit = ctx.halo.ids:gather(R) }
            end
        end
        SN:add_at(b.miss_halo, 1):round_f32()      -- a normal batch counts the misses
        return nil
    end,
}
