-- Unbalanced on purpose (tests/e2e/lab.sh): all nodes but one per other part in part 0 cuts
-- almost no edge, but the balance is about 4 (lab 1 requires 1.05). (A part left empty is
-- refused by the partitioner itself, so each other part gets one node.)
return {
    name = "unbalanced",
    partition = function(g)
        local a = halo.array("int32", g.nodes, 0)
        for k = 1, g.parts - 1 do
            a:set(k - 1, k) -- node k-1 alone in part k
        end
        return { method = "custom", parts = g.parts, assign = a }
    end,
}
