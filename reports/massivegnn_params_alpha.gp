# massivegnn_params_alpha.gp: the figure of experiments/massivegnn_params_alpha.lua, written by `halo sweep`.
# Edit and rerun from this directory: `gnuplot massivegnn_params_alpha.gp` reads massivegnn_params_alpha.data.csv (one row per
# finished configuration, columns by name; failed points are not in it) and writes
# massivegnn_params_alpha.png (pngcairo) and massivegnn_params_alpha.svg.
if (!exists("data")) data = "massivegnn_params_alpha.data.csv"
if (!exists("out")) out = "massivegnn_params_alpha"
set datafile separator comma
set datafile columnheaders
set datafile missing "NaN"

# panel 1: heatmap of run.set.alpha vs run.set.delta
p0x(s) = (s eq "") ? 0 : (s eq "0.001") ? 1 : (s eq "0.005") ? 2 : (s eq "0.01") ? 3 : (s eq "0.05") ? 4 : (s eq "0.1") ? 5 : NaN
p0y(s) = (s eq "") ? 0 : (s eq "2") ? 1 : (s eq "8") ? 2 : (s eq "32") ? 3 : (s eq "64") ? 4 : NaN
set table $p0s0
plot data using (p0x(strcol("run.set.alpha"))):(p0y(strcol("run.set.delta"))):(column("improvement")) with table
unset table

# panel 2: heatmap of run.set.alpha vs run.set.delta
p1x(s) = (s eq "") ? 0 : (s eq "0.001") ? 1 : (s eq "0.005") ? 2 : (s eq "0.01") ? 3 : (s eq "0.05") ? 4 : (s eq "0.1") ? 5 : NaN
p1y(s) = (s eq "") ? 0 : (s eq "2") ? 1 : (s eq "8") ? 2 : (s eq "32") ? 3 : (s eq "64") ? 4 : NaN
set table $p1s0
plot data using (p1x(strcol("run.set.alpha"))):(p1y(strcol("run.set.delta"))):(column("hit_rate")) with table
unset table

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
    set multiplot layout 1,2 title "MassiveGNN over alpha x delta (f 0.25), 16 GPUs (simulated, Perlmutter)"
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
    set title "improvement over DistDGL (%)"
    set xlabel "score decay alpha"
    set ylabel "eviction period delta (mini-batches)"
    set xtics ("(default)" 0, "0.001" 1, "0.005" 2, "0.01" 3, "0.05" 4, "0.1" 5)
    set xrange [-0.6:5.6]
    set key below left reverse Left samplen 2
    set bmargin 5.5
    set ytics ("(default)" 0, "2" 1, "8" 2, "32" 3, "64" 4)
    set yrange [-0.5:4.5]
    unset grid
    set cblabel "improvement (%)" offset char 2,0
    set rmargin 12
    plot $p0s0 using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette notitle, \
        $p0s0 using 1:2:(sprintf("%.3g", $3)) with labels notitle, \
        $p0s0 using (($3 >= 15 && $3 <= 40) ? $1 : NaN):2:(0.47):(0.47) with boxxyerror fs empty lc rgb "black" lw 2.5 notitle, \
        keyentry with boxes fs empty lc rgb "black" lw 2.5 title "paper's range: 15-40% (MassiveGNN)"
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
    set title "hit rate (halo nodes)"
    set xlabel "score decay alpha"
    set ylabel "eviction period delta (mini-batches)"
    set xtics ("(default)" 0, "0.001" 1, "0.005" 2, "0.01" 3, "0.05" 4, "0.1" 5)
    set xrange [-0.6:5.6]
    set key below left reverse Left samplen 2
    set bmargin 5.5
    set ytics ("(default)" 0, "2" 1, "8" 2, "32" 3, "64" 4)
    set yrange [-0.5:4.5]
    unset grid
    set cblabel "hit rate" offset char 2,0
    set rmargin 12
    plot $p1s0 using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder lc palette notitle, \
        $p1s0 using 1:2:(sprintf("%.3g", $3)) with labels notitle, \
        $p1s0 using (($3 >= 0.41 && $3 <= 0.45) ? $1 : NaN):2:(0.47):(0.47) with boxxyerror fs empty lc rgb "black" lw 2.5 notitle, \
        keyentry with boxes fs empty lc rgb "black" lw 2.5 title "paper's range: 0.41-0.45 (MassiveGNN, f 0.25)"
    unset multiplot
    unset output
}
