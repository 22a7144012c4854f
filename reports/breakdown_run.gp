# breakdown_run.gp: the figure of experiments/breakdown_run.lua, written by `halo sweep`.
# Edit and rerun from this directory: `gnuplot breakdown_run.gp` reads breakdown_run.data.csv (one row per
# finished configuration, columns by name; failed points are not in it) and writes
# breakdown_run.png (pngcairo) and breakdown_run.svg.
if (!exists("data")) data = "breakdown_run.data.csv"
if (!exists("out")) out = "breakdown_run"
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

# panel 1: stacked of run.policy vs sample_s, fetch_s, copy_s, compute_s, allreduce_s, wait_s
p0x(s) = (s eq "policies/distdglv2.lua") ? 0 : (s eq "policies/massivegnn.lua") ? 1 : (s eq "policies/distdgl.lua") ? 2 : NaN
set table $p0s0
plot data using (p0x(strcol("run.policy"))):(column("sample_s")):(column("fetch_s")):(column("copy_s")):(column("compute_s")):(column("allreduce_s")):(column("wait_s")) with table
unset table

# panel 2: bars of run.policy vs epoch_s
p1x(s) = (s eq "policies/distdglv2.lua") ? 0 : (s eq "policies/massivegnn.lua") ? 1 : (s eq "policies/distdgl.lua") ? 2 : NaN
set table $p1s0
plot data using (p1x(strcol("run.policy"))):(column("epoch_s")) with table
unset table
$p1band0 << EOD
-0.6 0.147623573333333 0.22143536
2.6 0.147623573333333 0.22143536
EOD
$p1band1 << EOD
-0.6 0.265192047904192 0.375314169491525
2.6 0.265192047904192 0.375314169491525
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
    set multiplot layout 1,2 title "Epoch breakdown by stage, measured on 4 ranks (emulated 2 ms, 1 Gbit/s network)"
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
    set title "stage times per rank"
    set xlabel "system (policy)"
    set ylabel "seconds per rank and epoch"
    set xtics ("distdglv2" 0, "massivegnn" 1, "distdgl" 2)
    set xrange [-0.6:2.6]
    set offsets 0, 0, graph 0.42, 0
    set yrange [0:*]
    plot $p0s0 using ($1+0.0000):($2+$3+$4+$5+$6+$7):(0.7600) with boxes fs solid 0.85 border lc "black" lc 6 title "wait for the pipeline", \
        $p0s0 using ($1+0.0000):($2+$3+$4+$5+$6):(0.7600) with boxes fs solid 0.85 border lc "black" lc 5 title "allreduce", \
        $p0s0 using ($1+0.0000):($2+$3+$4+$5):(0.7600) with boxes fs solid 0.85 border lc "black" lc 4 title "compute", \
        $p0s0 using ($1+0.0000):($2+$3+$4):(0.7600) with boxes fs solid 0.85 border lc "black" lc 3 title "copy to device", \
        $p0s0 using ($1+0.0000):($2+$3):(0.7600) with boxes fs solid 0.85 border lc "black" lc 2 title "fetch", \
        $p0s0 using ($1+0.0000):($2):(0.7600) with boxes fs solid 0.85 border lc "black" lc 1 title "sample"
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
    set title "epoch time"
    set xlabel "system (policy)"
    set ylabel "epoch time, slowest rank (s)"
    set xtics ("distdglv2" 0, "massivegnn" 1, "distdgl" 2)
    set xrange [-0.6:2.6]
    set offsets 0, 0, graph 0.25, 0
    set yrange [0:*]
    plot $p1band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 2-3x over distdgl (DistDGLv2)", \
        $p1band1 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#4a90d9" title "paper: 1.18-1.67x over distdgl (MassiveGNN)", \
        $p1s0 using ($1+0.0000):($2):(0.7600) with boxes fs solid 0.85 border lc "black" lc 1 title ""
    unset multiplot
    unset output
}
