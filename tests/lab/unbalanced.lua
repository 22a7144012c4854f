-- Unbalanced on purpose (tests/e2e/lab.sh): every node in part 0 cuts no edge at all, but the
-- balance is 4 (lab 1 requires 1.05).
return {
    name = "unbalanced",
    partition = function(g)
        return { method = "custom", parts = g.parts, assign = halo.array("int32", g.nodes, 0) }
    end,
}
