# partitioners.gp: the figure of experiments/partitioners.lua, written by `halo sweep`.
# Edit and rerun from this directory: `gnuplot partitioners.gp` reads partitioners.data.csv (one row per
# finished configuration, columns by name; failed points are not in it) and writes
# partitioners.png (pngcairo) and partitioners.svg.
if (!exists("data")) data = "partitioners.data.csv"
if (!exists("out")) out = "partitioners"
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

# panel 1: bars of partition.parts vs edge_cut
p0x(s) = (s eq "2") ? 0 : (s eq "4") ? 1 : (s eq "8") ? 2 : (s eq "16") ? 3 : (s eq "32") ? 4 : (s eq "64") ? 5 : NaN
set table $p0s0
plot data using (p0x(strcol("partition.parts"))):(column("edge_cut")) with table if (strcol("partition.method") eq "metis")
unset table
set table $p0s1
plot data using (p0x(strcol("partition.parts"))):(column("edge_cut")) with table if (strcol("partition.method") eq "multilevel")
unset table
set table $p0s2
plot data using (p0x(strcol("partition.parts"))):(column("edge_cut")) with table if (strcol("partition.method") eq "random")
unset table
set table $p0s3
plot data using (p0x(strcol("partition.parts"))):(column("edge_cut")) with table if (strcol("partition.method") eq "stream")
unset table

# panel 2: bars of partition.parts vs replication
p1x(s) = (s eq "2") ? 0 : (s eq "4") ? 1 : (s eq "8") ? 2 : (s eq "16") ? 3 : (s eq "32") ? 4 : (s eq "64") ? 5 : NaN
set table $p1s0
plot data using (p1x(strcol("partition.parts"))):(column("replication")) with table if (strcol("partition.method") eq "metis")
unset table
set table $p1s1
plot data using (p1x(strcol("partition.parts"))):(column("replication")) with table if (strcol("partition.method") eq "multilevel")
unset table
set table $p1s2
plot data using (p1x(strcol("partition.parts"))):(column("replication")) with table if (strcol("partition.method") eq "random")
unset table
set table $p1s3
plot data using (p1x(strcol("partition.parts"))):(column("replication")) with table if (strcol("partition.method") eq "stream")
unset table

# panel 3: bars of partition.parts vs remote_mb
p2x(s) = (s eq "2") ? 0 : (s eq "4") ? 1 : (s eq "8") ? 2 : (s eq "16") ? 3 : (s eq "32") ? 4 : (s eq "64") ? 5 : NaN
set table $p2s0
plot data using (p2x(strcol("partition.parts"))):(column("remote_mb")) with table if (strcol("partition.method") eq "metis")
unset table
set table $p2s1
plot data using (p2x(strcol("partition.parts"))):(column("remote_mb")) with table if (strcol("partition.method") eq "multilevel")
unset table
set table $p2s2
plot data using (p2x(strcol("partition.parts"))):(column("remote_mb")) with table if (strcol("partition.method") eq "random")
unset table
set table $p2s3
plot data using (p2x(strcol("partition.parts"))):(column("remote_mb")) with table if (strcol("partition.method") eq "stream")
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
    set multiplot layout 1,3 title "Partitioners: edge cut, replication and remote traffic vs parts"
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
    set title "edge cut"
    set xlabel "parts"
    set ylabel "fraction of edges cut"
    set key title "partitioner"
    set xtics ("2" 0, "4" 1, "8" 2, "16" 3, "32" 4, "64" 5)
    set xrange [-0.6:5.6]
    set offsets 0, 0, graph 0.35, 0
    set yrange [0:*]
    plot $p0s0 using ($1-0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 1 title "metis", \
        $p0s1 using ($1-0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 2 title "multilevel", \
        $p0s2 using ($1+0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 3 title "random", \
        $p0s3 using ($1+0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 4 title "stream"
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
    set title "replication factor"
    set xlabel "parts"
    set ylabel "(owned + halo) / nodes"
    set logscale y
    set key title "partitioner"
    set xtics ("2" 0, "4" 1, "8" 2, "16" 3, "32" 4, "64" 5)
    set xrange [-0.6:5.6]
    set offsets 0, 0, graph 0.35, 0
    plot $p1s0 using ($1-0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 1 title "metis", \
        $p1s1 using ($1-0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 2 title "multilevel", \
        $p1s2 using ($1+0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 3 title "random", \
        $p1s3 using ($1+0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 4 title "stream"
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
    set title "remote traffic of one epoch"
    set xlabel "parts"
    set ylabel "remote MB per epoch (all parts)"
    set logscale y
    set key title "partitioner"
    set xtics ("2" 0, "4" 1, "8" 2, "16" 3, "32" 4, "64" 5)
    set xrange [-0.6:5.6]
    set offsets 0, 0, graph 0.35, 0
    plot $p2s0 using ($1-0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 1 title "metis", \
        $p2s1 using ($1-0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 2 title "multilevel", \
        $p2s2 using ($1+0.1000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 3 title "random", \
        $p2s3 using ($1+0.3000):($2):(0.1900) with boxes fs solid 0.85 border lc "black" lc 4 title "stream"
    unset multiplot
    unset output
}
