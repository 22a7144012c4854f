# massivegnn_speedup.gp: the figure of experiments/massivegnn_speedup.lua, written by `halo sweep`.
# Edit and rerun from this directory: `gnuplot massivegnn_speedup.gp` reads massivegnn_speedup.data.csv (one row per
# finished configuration, columns by name; failed points are not in it) and writes
# massivegnn_speedup.png (pngcairo) and massivegnn_speedup.svg.
if (!exists("data")) data = "massivegnn_speedup.data.csv"
if (!exists("out")) out = "massivegnn_speedup"
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

# panel 1: bars of partition.parts vs improvement
p0x(s) = (s eq "8") ? 0 : (s eq "16") ? 1 : (s eq "32") ? 2 : (s eq "64") ? 3 : NaN
set table $p0s0
plot data using (p0x(strcol("partition.parts"))):(column("improvement")) with table if (strcol("graph.preset") eq "arxiv")
unset table
set table $p0s1
plot data using (p0x(strcol("partition.parts"))):(column("improvement")) with table if (strcol("graph.preset") eq "products")
unset table
set table $p0s2
plot data using (p0x(strcol("partition.parts"))):(column("improvement")) with table if (strcol("graph.preset") eq "papers100M")
unset table
$p0band0 << EOD
-0.6 15 40
3.6 15 40
EOD

# panel 2: bars of partition.parts vs hit_rate
p1x(s) = (s eq "8") ? 0 : (s eq "16") ? 1 : (s eq "32") ? 2 : (s eq "64") ? 3 : NaN
set table $p1s0
plot data using (p1x(strcol("partition.parts"))):(column("hit_rate")) with table if (strcol("graph.preset") eq "arxiv")
unset table
set table $p1s1
plot data using (p1x(strcol("partition.parts"))):(column("hit_rate")) with table if (strcol("graph.preset") eq "products")
unset table
set table $p1s2
plot data using (p1x(strcol("partition.parts"))):(column("hit_rate")) with table if (strcol("graph.preset") eq "papers100M")
unset table
$p1band0 << EOD
-0.6 0.41 0.45
3.6 0.41 0.45
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
    set multiplot layout 1,2 title "MassiveGNN vs DistDGL, 2 to 16 machines x 4 GPUs (simulated, Perlmutter)"
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
    set title "improvement over DistDGL"
    set xlabel "GPUs (machines x 4)"
    set ylabel "epoch time improvement (%)"
    set key title "graph"
    set xtics ("8" 0, "16" 1, "32" 2, "64" 3)
    set xrange [-0.6:3.6]
    set offsets 0, 0, graph 0.35, 0
    set yrange [0:*]
    plot $p0band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 15-40% (MassiveGNN)", \
        $p0s0 using ($1-0.2667):($2):(0.2533) with boxes fs solid 0.85 border lc "black" lc 1 title "arxiv", \
        $p0s1 using ($1+0.0000):($2):(0.2533) with boxes fs solid 0.85 border lc "black" lc 2 title "products", \
        $p0s2 using ($1+0.2667):($2):(0.2533) with boxes fs solid 0.85 border lc "black" lc 3 title "papers100M"
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
    set title "MassiveGNN buffer hit rate (f = 0.25)"
    set xlabel "GPUs (machines x 4)"
    set ylabel "hit rate (halo nodes)"
    set key title "graph"
    set xtics ("8" 0, "16" 1, "32" 2, "64" 3)
    set xrange [-0.6:3.6]
    set offsets 0, 0, graph 0.35, 0
    set yrange [0:*]
    plot $p1band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 0.41-0.45 (MassiveGNN, f 0.25)", \
        $p1s0 using ($1-0.2667):($2):(0.2533) with boxes fs solid 0.85 border lc "black" lc 1 title "arxiv", \
        $p1s1 using ($1+0.0000):($2):(0.2533) with boxes fs solid 0.85 border lc "black" lc 2 title "products", \
        $p1s2 using ($1+0.2667):($2):(0.2533) with boxes fs solid 0.85 border lc "black" lc 3 title "papers100M"
    unset multiplot
    unset output
}
