# scale_massivegnn.gp: the figure of experiments/scale/scale_massivegnn.lua, written by `halo sweep`.
# Edit and rerun from this directory: `gnuplot scale_massivegnn.gp` reads scale_massivegnn.data.csv (one row per
# finished configuration, columns by name; failed points are not in it) and writes
# scale_massivegnn.png (pngcairo) and scale_massivegnn.svg.
if (!exists("data")) data = "scale_massivegnn.data.csv"
if (!exists("out")) out = "scale_massivegnn"
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

# panel 1: bars of partition.parts vs improvement_arxiv
p0x(s) = (s eq "8") ? 0 : (s eq "16") ? 1 : (s eq "32") ? 2 : (s eq "64") ? 3 : NaN
set table $p0s0
plot data using (p0x(strcol("partition.parts"))):(column("improvement_arxiv")) with table if (strcol("run.set.f") eq "")
unset table
set table $p0s1
plot data using (p0x(strcol("partition.parts"))):(column("improvement_arxiv")) with table if (strcol("run.set.f") eq "0.25")
unset table
set table $p0s2
plot data using (p0x(strcol("partition.parts"))):(column("improvement_arxiv")) with table if (strcol("run.set.f") eq "0.5")
unset table
set table $p0s3
plot data using (p0x(strcol("partition.parts"))):(column("improvement_arxiv")) with table if (strcol("run.set.f") eq "1")
unset table
$p0band0 << EOD
-0.6 15 40
3.6 15 40
EOD

# panel 2: bars of partition.parts vs improvement_products
p1x(s) = (s eq "8") ? 0 : (s eq "16") ? 1 : (s eq "32") ? 2 : (s eq "64") ? 3 : NaN
set table $p1s0
plot data using (p1x(strcol("partition.parts"))):(column("improvement_products")) with table if (strcol("run.set.f") eq "")
unset table
set table $p1s1
plot data using (p1x(strcol("partition.parts"))):(column("improvement_products")) with table if (strcol("run.set.f") eq "0.25")
unset table
set table $p1s2
plot data using (p1x(strcol("partition.parts"))):(column("improvement_products")) with table if (strcol("run.set.f") eq "0.5")
unset table
set table $p1s3
plot data using (p1x(strcol("partition.parts"))):(column("improvement_products")) with table if (strcol("run.set.f") eq "1")
unset table
$p1band0 << EOD
-0.6 15 40
3.6 15 40
EOD

# panel 3: bars of partition.parts vs hit_rate_arxiv
p2x(s) = (s eq "8") ? 0 : (s eq "16") ? 1 : (s eq "32") ? 2 : (s eq "64") ? 3 : NaN
set table $p2s0
plot data using (p2x(strcol("partition.parts"))):(column("hit_rate_arxiv")) with table if (strcol("run.set.f") eq "")
unset table
set table $p2s1
plot data using (p2x(strcol("partition.parts"))):(column("hit_rate_arxiv")) with table if (strcol("run.set.f") eq "0.25")
unset table
set table $p2s2
plot data using (p2x(strcol("partition.parts"))):(column("hit_rate_arxiv")) with table if (strcol("run.set.f") eq "0.5")
unset table
set table $p2s3
plot data using (p2x(strcol("partition.parts"))):(column("hit_rate_arxiv")) with table if (strcol("run.set.f") eq "1")
unset table

# panel 4: bars of partition.parts vs hit_rate_products
p3x(s) = (s eq "8") ? 0 : (s eq "16") ? 1 : (s eq "32") ? 2 : (s eq "64") ? 3 : NaN
set table $p3s0
plot data using (p3x(strcol("partition.parts"))):(column("hit_rate_products")) with table if (strcol("run.set.f") eq "")
unset table
set table $p3s1
plot data using (p3x(strcol("partition.parts"))):(column("hit_rate_products")) with table if (strcol("run.set.f") eq "0.25")
unset table
set table $p3s2
plot data using (p3x(strcol("partition.parts"))):(column("hit_rate_products")) with table if (strcol("run.set.f") eq "0.5")
unset table
set table $p3s3
plot data using (p3x(strcol("partition.parts"))):(column("hit_rate_products")) with table if (strcol("run.set.f") eq "1")
unset table
$p3band0 << EOD
-0.6 0.41 0.45
3.6 0.41 0.45
EOD

set datafile separator whitespace
set datafile nocolumnheaders
set palette defined (0 "#fff5eb", 1 "#d94801")

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo noenhanced size 1120,840 font "sans,10"
    } else {
        set terminal svg noenhanced size 1120,840 font "sans,10" dynamic
    }
    set output out.".".fmt
    set multiplot layout 2,2 title "At scale: MassiveGNN vs DistDGL, arxiv- and products-like x1, batch 2000, 8 to 64 GPUs (simulated, Perlmutter)"
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
    set title "arxiv-like: improvement over DistDGL (paper: 15-40%)"
    set xlabel "GPUs (machines x 4)"
    set ylabel "epoch time improvement (%)"
    set key title "prefetch fraction f"
    set xtics ("8" 0, "16" 1, "32" 2, "64" 3)
    set xrange [-0.6:3.6]
    set offsets 0, 0, graph 0.42, 0
    set yrange [0:*]
    plot $p0band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 15-40% (MassiveGNN)", \
        $p0s0 using ($1-0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 1 title "(default)", \
        $p0s1 using ($1-0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 2 title "0.25", \
        $p0s2 using ($1+0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 3 title "0.5", \
        $p0s3 using ($1+0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 4 title "1"
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
    set title "products-like: improvement over DistDGL (paper: 15-40%)"
    set xlabel "GPUs (machines x 4)"
    set ylabel "epoch time improvement (%)"
    set key title "prefetch fraction f"
    set xtics ("8" 0, "16" 1, "32" 2, "64" 3)
    set xrange [-0.6:3.6]
    set offsets 0, 0, graph 0.42, 0
    set yrange [0:*]
    plot $p1band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 15-40% (MassiveGNN)", \
        $p1s0 using ($1-0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 1 title "(default)", \
        $p1s1 using ($1-0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 2 title "0.25", \
        $p1s2 using ($1+0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 3 title "0.5", \
        $p1s3 using ($1+0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 4 title "1"
    # panel 3
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
    set title "arxiv-like: buffer hit rate (paper, products 16 GPUs f 0.25: 0.41-0.45)"
    set xlabel "GPUs (machines x 4)"
    set ylabel "hit rate (halo nodes)"
    set key title "prefetch fraction f"
    set xtics ("8" 0, "16" 1, "32" 2, "64" 3)
    set xrange [-0.6:3.6]
    set offsets 0, 0, graph 0.35, 0
    set yrange [0:*]
    plot $p2s0 using ($1-0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 1 title "(default)", \
        $p2s1 using ($1-0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 2 title "0.25", \
        $p2s2 using ($1+0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 3 title "0.5", \
        $p2s3 using ($1+0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 4 title "1"
    # panel 4
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
    set title "products-like: buffer hit rate (paper, products 16 GPUs f 0.25: 0.41-0.45)"
    set xlabel "GPUs (machines x 4)"
    set ylabel "hit rate (halo nodes)"
    set key title "prefetch fraction f"
    set xtics ("8" 0, "16" 1, "32" 2, "64" 3)
    set xrange [-0.6:3.6]
    set offsets 0, 0, graph 0.42, 0
    set yrange [0:*]
    plot $p3band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 0.41-0.45 (MassiveGNN, 16 GPUs, f 0.25)", \
        $p3s0 using ($1-0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 1 title "(default)", \
        $p3s1 using ($1-0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 2 title "0.25", \
        $p3s2 using ($1+0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 3 title "0.5", \
        $p3s3 using ($1+0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 4 title "1"
    unset multiplot
    unset output
}
