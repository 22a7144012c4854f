# graph_scale.gp: the figure of experiments/graph_scale.lua, written by `halo sweep`.
# Edit and rerun from this directory: `gnuplot graph_scale.gp` reads graph_scale.data.csv (one row per
# finished configuration, columns by name; failed points are not in it) and writes
# graph_scale.png (pngcairo) and graph_scale.svg.
if (!exists("data")) data = "graph_scale.data.csv"
if (!exists("out")) out = "graph_scale"
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

# panel 1: line of graph.scale vs epoch_s
set table $p0s0
plot data using (column("graph.scale")):(column("epoch_s")) with table if (strcol("run.policy") eq "policies/distdgl.lua")
unset table
set table $p0s1
plot data using (column("graph.scale")):(column("epoch_s")) with table if (strcol("run.policy") eq "policies/distdglv2.lua")
unset table

# panel 2: bars of graph.scale vs speedup
p1x(s) = (s eq "0.01") ? 0 : (s eq "0.02") ? 1 : (s eq "0.05") ? 2 : (s eq "0.1") ? 3 : (s eq "0.2") ? 4 : NaN
set table $p1s0
plot data using (p1x(strcol("graph.scale"))):(column("speedup")) with table if (strcol("run.policy") eq "policies/distdgl.lua")
unset table
set table $p1s1
plot data using (p1x(strcol("graph.scale"))):(column("speedup")) with table if (strcol("run.policy") eq "policies/distdglv2.lua")
unset table
$p1band0 << EOD
-0.6 2 3
4.6 2 3
EOD

set datafile separator whitespace
set datafile nocolumnheaders
set palette defined (0 "#fff5eb", 1 "#d94801")

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo noenhanced size 1120,420 font "sans,10"
    } else {
        set terminal svg noenhanced size 1120,420 font "sans,10" dynamic
    }
    set output out.".".fmt
    set multiplot layout 1,2 title "Epoch time vs graph size, 16 GPUs (simulated, Perlmutter)"
    # panel 1
    set autoscale
    unset logscale
    unset title
    set xtics autofreq norotate
    set ytics autofreq
    set key default
    set key noenhanced
    set grid
    unset rmargin
    unset bmargin
    set title "epoch time"
    set xlabel "graph scale (fraction of ogbn-products)"
    set ylabel "epoch time, slowest GPU (s)"
    set logscale x
    set logscale y
    set key title "system"
    set offsets 0, 0, graph 0.25, 0
    plot $p0s0 using 1:2 smooth unique with linespoints lw 2 pt 7 title "distdgl", \
        $p0s1 using 1:2 smooth unique with linespoints lw 2 pt 7 title "distdglv2"
    # panel 2
    set autoscale
    unset logscale
    unset title
    set xtics autofreq norotate
    set ytics autofreq
    set key default
    set key noenhanced
    set grid
    unset rmargin
    unset bmargin
    set title "speedup over DistDGL"
    set xlabel "graph scale (fraction of ogbn-products)"
    set ylabel "speedup"
    set key title "system"
    set xtics ("0.01" 0, "0.02" 1, "0.05" 2, "0.1" 3, "0.2" 4)
    set xrange [-0.6:4.6]
    set offsets 0, 0, graph 0.28, 0
    set yrange [0:*]
    plot $p1band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 2-3x (DistDGLv2)", \
        $p1s0 using ($1-0.2000):($2):(0.3800) with boxes fs solid 0.85 border lc "black" lc 1 title "distdgl", \
        $p1s1 using ($1+0.2000):($2):(0.3800) with boxes fs solid 0.85 border lc "black" lc 2 title "distdglv2"
    unset multiplot
    unset output
}
