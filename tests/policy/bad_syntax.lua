-- bad_syntax.lua: a syntax error on line 3 (`halo policy check` must name the file and line).
return {
    fanout = function(ctx) return { 10, 25 } end end,
}
