# simulated vs measured epoch time (halo sim validate); rerun: gnuplot sim_vs_measured.gp
if (!exists("out")) out = "sim_vs_measured"
set datafile separator ","
set key top left
set logscale xy
set xlabel "measured epoch (s)"
set ylabel "simulated epoch (s)"
set title "halo sim (profile this-machine-validated) vs mpirun halo train, 20 configurations\nepoch median |error| 6.0%, worst 39.8%"
set grid
set size ratio -1
stats "sim_vs_measured.csv" every ::1 using 12:13 nooutput
lo = (STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y) / 1.5
hi = (STATS_max_x > STATS_max_y ? STATS_max_x : STATS_max_y) * 1.5
set xrange [lo:hi]
set yrange [lo:hi]
do for [fmt in "png svg"] {
    if (fmt eq "png") { set terminal pngcairo size 900,800 font ",10" } else { set terminal svg size 900,800 dynamic font ",10" }
    set output out . "." . fmt
    plot x with lines lc rgb "#555555" dt 2 title "y = x", \
         x * 1.1 with lines lc rgb "#bbbbbb" dt 3 title "+-10%", x / 1.1 with lines lc rgb "#bbbbbb" dt 3 notitle, \
         x * 1.25 with lines lc rgb "#dddddd" dt 3 title "+-25%", x / 1.25 with lines lc rgb "#dddddd" dt 3 notitle, \
         "sim_vs_measured.csv" every ::1 using (strcol(11) eq "off" ? $12 : NaN):13 with points pt 7 ps 1.3 lc rgb "#1f77b4" title "no netem", \
         "" every ::1 using (strcol(11) ne "off" ? $12 : NaN):13 with points pt 5 ps 1.3 lc rgb "#d62728" title "netem", \
         "" every ::1 using 12:13:1 with labels font ",7" offset char 0.8,0 left notitle
    unset output
}
