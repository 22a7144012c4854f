# v2_ablation_run.gp: the figure of experiments/v2_ablation_run.lua, written by `halo sweep`.
# Edit and rerun from this directory: `gnuplot v2_ablation_run.gp` reads v2_ablation_run.data.csv (one row per
# finished configuration, columns by name; failed points are not in it) and writes
# v2_ablation_run.png (pngcairo) and v2_ablation_run.svg.
if (!exists("data")) data = "v2_ablation_run.data.csv"
if (!exists("out")) out = "v2_ablation_run"
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

# panel 1: bars of run.depth vs epoch_s
p0x(s) = (s eq "0") ? 0 : (s eq "1") ? 1 : (s eq "2") ? 2 : (s eq "4") ? 3 : NaN
set table $p0s0
plot data using (p0x(strcol("run.depth"))):(column("epoch_s")) with table if (strcol("partition.method") eq "metis")
unset table
set table $p0s1
plot data using (p0x(strcol("run.depth"))):(column("epoch_s")) with table if (strcol("partition.method") eq "multilevel")
unset table
$p0band0 << EOD
-0.6 0.119752905 0.1796293575
3.6 0.119752905 0.1796293575
EOD

# panel 2: bars of run.depth vs speedup
p1x(s) = (s eq "0") ? 0 : (s eq "1") ? 1 : (s eq "2") ? 2 : (s eq "4") ? 3 : NaN
set table $p1s0
plot data using (p1x(strcol("run.depth"))):(column("speedup")) with table if (strcol("partition.method") eq "metis")
unset table
set table $p1s1
plot data using (p1x(strcol("run.depth"))):(column("speedup")) with table if (strcol("partition.method") eq "multilevel")
unset table
$p1band0 << EOD
-0.6 2 3
3.6 2 3
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
    set multiplot layout 1,2 title "DistDGLv2 ablation measured on 4 ranks (emulated 2 ms, 1 Gbit/s network)"
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
    set xlabel "pipeline depth (0 = synchronous)"
    set ylabel "epoch time, slowest rank (s)"
    set key title "partitioner"
    set xtics ("0" 0, "1" 1, "2" 2, "4" 3)
    set xrange [-0.6:3.6]
    set offsets 0, 0, graph 0.28, 0
    set yrange [0:*]
    plot $p0band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 2-3x over metis 0 (DistDGLv2)", \
        $p0s0 using ($1-0.2000):($2):(0.3800) with boxes fs solid 0.85 border lc "black" lc 1 title "metis", \
        $p0s1 using ($1+0.2000):($2):(0.3800) with boxes fs solid 0.85 border lc "black" lc 2 title "multilevel"
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
    set title "speedup over metis at depth 0"
    set xlabel "pipeline depth (0 = synchronous)"
    set ylabel "speedup"
    set key title "partitioner"
    set xtics ("0" 0, "1" 1, "2" 2, "4" 3)
    set xrange [-0.6:3.6]
    set offsets 0, 0, graph 0.28, 0
    set yrange [0:*]
    plot $p1band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 2-3x (DistDGLv2)", \
        $p1s0 using ($1-0.2000):($2):(0.3800) with boxes fs solid 0.85 border lc "black" lc 1 title "metis", \
        $p1s1 using ($1+0.2000):($2):(0.3800) with boxes fs solid 0.85 border lc "black" lc 2 title "multilevel"
    unset multiplot
    unset output
}
