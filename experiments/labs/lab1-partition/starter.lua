-- Lab 1 starter: partition(g) for `halo lab check 1` / `halo lab grade 1`.
-- It runs and scores low: it deals the nodes out round-robin (node v goes to part v % parts),
-- which balances every constraint but ignores the edges, so it cuts about as many edges as a
-- random assignment. Replace it with something that looks at g.indptr / g.indices, or with a
-- choice of method and constraints (see the README).
return {
    name = "lab1-starter",

    partition = function(g)
        local assign = {}                  -- a Lua sequence: assign[v + 1] is node v's part
        for v = 0, g.nodes - 1 do
            assign[v + 1] = v % g.parts
        end
        return { method = "custom", parts = g.parts, assign = assign }
    end,
}
