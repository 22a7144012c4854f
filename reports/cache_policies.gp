# cache_policies.gp: the figure of experiments/cache_policies.lua, written by `halo sweep`.
# Edit and rerun from this directory: `gnuplot cache_policies.gp` reads cache_policies.data.csv (one row per
# finished configuration, columns by name; failed points are not in it) and writes
# cache_policies.png (pngcairo) and cache_policies.svg.
if (!exists("data")) data = "cache_policies.data.csv"
if (!exists("out")) out = "cache_policies"
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

# panel 1: bars of trace.policy vs hit_rate
p0x(s) = (s eq "belady") ? 0 : (s eq "pagraph") ? 1 : (s eq "vip") ? 2 : (s eq "fifo") ? 3 : (s eq "lru") ? 4 : (s eq "lfu") ? 5 : (s eq "massivegnn") ? 6 : NaN
set table $p0s0
plot data using (p0x(strcol("trace.policy"))):(column("hit_rate")) with table if (strcol("trace.capacity") eq "0.05")
unset table
set table $p0s1
plot data using (p0x(strcol("trace.policy"))):(column("hit_rate")) with table if (strcol("trace.capacity") eq "0.1")
unset table
set table $p0s2
plot data using (p0x(strcol("trace.policy"))):(column("hit_rate")) with table if (strcol("trace.capacity") eq "0.2")
unset table
set table $p0s3
plot data using (p0x(strcol("trace.policy"))):(column("hit_rate")) with table if (strcol("trace.capacity") eq "0.3")
unset table
set table $p0s4
plot data using (p0x(strcol("trace.policy"))):(column("hit_rate")) with table if (strcol("trace.capacity") eq "0.4")
unset table
set table $p0s5
plot data using (p0x(strcol("trace.policy"))):(column("hit_rate")) with table if (strcol("trace.capacity") eq "0.5")
unset table
$p0band0 << EOD
-0.6 0.41 0.45
6.6 0.41 0.45
EOD

# panel 2: line of trace.capacity vs remote_mb
set table $p1s0
plot data using (column("trace.capacity")):(column("remote_mb")) with table if (strcol("trace.policy") eq "belady")
unset table
set table $p1s1
plot data using (column("trace.capacity")):(column("remote_mb")) with table if (strcol("trace.policy") eq "pagraph")
unset table
set table $p1s2
plot data using (column("trace.capacity")):(column("remote_mb")) with table if (strcol("trace.policy") eq "vip")
unset table
set table $p1s3
plot data using (column("trace.capacity")):(column("remote_mb")) with table if (strcol("trace.policy") eq "fifo")
unset table
set table $p1s4
plot data using (column("trace.capacity")):(column("remote_mb")) with table if (strcol("trace.policy") eq "lru")
unset table
set table $p1s5
plot data using (column("trace.capacity")):(column("remote_mb")) with table if (strcol("trace.policy") eq "lfu")
unset table
set table $p1s6
plot data using (column("trace.capacity")):(column("remote_mb")) with table if (strcol("trace.policy") eq "massivegnn")
unset table

# panel 3: bars of trace.policy vs of_belady
p2x(s) = (s eq "belady") ? 0 : (s eq "pagraph") ? 1 : (s eq "vip") ? 2 : (s eq "fifo") ? 3 : (s eq "lru") ? 4 : (s eq "lfu") ? 5 : (s eq "massivegnn") ? 6 : NaN
set table $p2s0
plot data using (p2x(strcol("trace.policy"))):(column("of_belady")) with table if (strcol("trace.capacity") eq "0.05")
unset table
set table $p2s1
plot data using (p2x(strcol("trace.policy"))):(column("of_belady")) with table if (strcol("trace.capacity") eq "0.1")
unset table
set table $p2s2
plot data using (p2x(strcol("trace.policy"))):(column("of_belady")) with table if (strcol("trace.capacity") eq "0.2")
unset table
set table $p2s3
plot data using (p2x(strcol("trace.policy"))):(column("of_belady")) with table if (strcol("trace.capacity") eq "0.3")
unset table
set table $p2s4
plot data using (p2x(strcol("trace.policy"))):(column("of_belady")) with table if (strcol("trace.capacity") eq "0.4")
unset table
set table $p2s5
plot data using (p2x(strcol("trace.policy"))):(column("of_belady")) with table if (strcol("trace.capacity") eq "0.5")
unset table

set datafile separator whitespace
set datafile nocolumnheaders
set palette defined (0 "#fff5eb", 1 "#d94801")

do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo noenhanced size 1680,420 font "sans,10"
    } else {
        set terminal svg noenhanced size 1680,420 font "sans,10" dynamic
    }
    set output out.".".fmt
    set multiplot layout 1,3 title "Remote-feature cache policies vs Belady (trace replay, 16 parts)"
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
    set title "hit rate, by capacity (fraction of the halo set)"
    set xlabel "policy"
    set ylabel "hit rate (halo nodes)"
    set key title "cache capacity"
    set xtics ("belady" 0, "pagraph" 1, "vip" 2, "fifo" 3, "lru" 4, "lfu" 5, "massivegnn" 6)
    set xrange [-0.6:6.6]
    set xtics rotate by -30
    set offsets 0, 0, graph 0.56, 0
    set yrange [0:*]
    plot $p0band0 using 1:2:3 with filledcurves fs transparent solid 0.22 noborder fc rgb "#7f7f7f" title "paper: 0.41-0.45 (MassiveGNN, f 0.25)", \
        $p0s0 using ($1-0.3333):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 1 title "0.05", \
        $p0s1 using ($1-0.2000):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 2 title "0.1", \
        $p0s2 using ($1-0.0667):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 3 title "0.2", \
        $p0s3 using ($1+0.0667):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 4 title "0.3", \
        $p0s4 using ($1+0.2000):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 5 title "0.4", \
        $p0s5 using ($1+0.3333):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 6 title "0.5"
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
    set title "remote feature traffic"
    set xlabel "capacity (fraction of the halo set)"
    set ylabel "remote feature MB, whole trace (all ranks)"
    set key title "cache policy"
    set offsets 0, 0, graph 0.56, 0
    plot $p1s0 using 1:2 smooth unique with linespoints lw 2 pt 7 title "belady", \
        $p1s1 using 1:2 smooth unique with linespoints lw 2 pt 7 title "pagraph", \
        $p1s2 using 1:2 smooth unique with linespoints lw 2 pt 7 title "vip", \
        $p1s3 using 1:2 smooth unique with linespoints lw 2 pt 7 title "fifo", \
        $p1s4 using 1:2 smooth unique with linespoints lw 2 pt 7 title "lru", \
        $p1s5 using 1:2 smooth unique with linespoints lw 2 pt 7 title "lfu", \
        $p1s6 using 1:2 smooth unique with linespoints lw 2 pt 7 title "massivegnn"
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
    set title "hit rate / Belady's, by capacity"
    set xlabel "policy"
    set ylabel "fraction of Belady's hit rate"
    set key title "cache capacity"
    set xtics ("belady" 0, "pagraph" 1, "vip" 2, "fifo" 3, "lru" 4, "lfu" 5, "massivegnn" 6)
    set xrange [-0.6:6.6]
    set xtics rotate by -30
    set offsets 0, 0, graph 0.49, 0
    set yrange [0:*]
    plot $p2s0 using ($1-0.3333):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 1 title "0.05", \
        $p2s1 using ($1-0.2000):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 2 title "0.1", \
        $p2s2 using ($1-0.0667):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 3 title "0.2", \
        $p2s3 using ($1+0.0667):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 4 title "0.3", \
        $p2s4 using ($1+0.2000):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 5 title "0.4", \
        $p2s5 using ($1+0.3333):($2):(0.1267) with boxes fs solid 0.85 border lc "black" lc 6 title "0.5"
    unset multiplot
    unset output
}
