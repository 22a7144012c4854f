# scale_v2_speedup_aws.gp: the figure of experiments/scale/scale_v2_speedup_aws.lua, written by `halo sweep`.
# Edit and rerun from this directory: `gnuplot scale_v2_speedup_aws.gp` reads scale_v2_speedup_aws.data.csv (one row per
# finished configuration, columns by name; failed points are not in it) and writes
# scale_v2_speedup_aws.png (pngcairo) and scale_v2_speedup_aws.svg.
if (!exists("data")) data = "scale_v2_speedup_aws.data.csv"
if (!exists("out")) out = "scale_v2_speedup_aws"
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

# panel 1: line of partition.parts vs epoch_s
set table $p0s0
plot data using (column("partition.parts")):(column("epoch_s")) with table if (strcol("run.policy") eq "policies/distdgl.lua")
unset table
set table $p0s1
plot data using (column("partition.parts")):(column("epoch_s")) with table if (strcol("run.policy") eq "policies/distdglv2.lua")
unset table
$p0band0 << EOD
8 5 10
64 5 10
EOD

# panel 2: bars of partition.parts vs speedup
p1x(s) = (s eq "8") ? 0 : (s eq "16") ? 1 : (s eq "32") ? 2 : (s eq "64") ? 3 : NaN
set table $p1s0
plot data using (p1x(strcol("partition.parts"))):(column("speedup")) with table if (strcol("run.policy") eq "policies/distdgl.lua")
unset table
set table $p1s1
plot data using (p1x(strcol("partition.parts"))):(column("speedup")) with table if (strcol("run.policy") eq "policies/distdglv2.lua")
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
    set multiplot layout 1,2 title "At scale: DistDGLv2 vs DistDGL, products-like x1, batch 1000, 8 to 64 GPUs (simulated, AWS p3dn)"
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
    set title "seconds per epoch (paper: 5-10 s at 64 GPUs, larger graphs)"
    set xlabel "GPUs (machines x 4)"
    set ylabel "epoch time (s)"
    set logscale y
    set key title "system"
    set offsets 0, 0, graph 0.28, 0
    plot $p0band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 5-10 s (DistDGLv2, 64 GPUs, graphs 45x larger)", \
        $p0s0 using 1:2 smooth unique with linespoints lw 2 pt 7 title "distdgl", \
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
    set title "speedup over DistDGL (paper: 2-3x)"
    set xlabel "GPUs (machines x 4)"
    set ylabel "speedup (DistDGL epoch / epoch)"
    set key title "system"
    set xtics ("8" 0, "16" 1, "32" 2, "64" 3)
    set xrange [-0.6:3.6]
    set offsets 0, 0, graph 0.28, 0
    set yrange [0:*]
    plot $p1band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 2-3x (DistDGLv2)", \
        $p1s0 using ($1-0.2000):($2):(0.3800) with boxes fs solid 0.85 border lc "black" lc 1 title "distdgl", \
        $p1s1 using ($1+0.2000):($2):(0.3800) with boxes fs solid 0.85 border lc "black" lc 2 title "distdglv2"
    unset multiplot
    unset output
}
