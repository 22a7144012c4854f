# simulated vs measured epoch time (scripts/sim-validate.sh); rerun: gnuplot sim_vs_measured.gp
set datafile separator ","
set key top left
set label 1 "the 7 runs below 0.11 s: no netem, CPU-bound" at 0.02,0.16 font ",8"
set xlabel "measured epoch (s)"
set ylabel "simulated epoch (s)"
set title "halo sim vs measured runs on this machine: median |error| 8.3%, worst 24.5%"
set grid
set size ratio -1
f(x) = x
set xrange [0:0.42]
set yrange [0:0.42]
set style line 1 lc rgb "#1f77b4" pt 7 ps 1.4
set style line 2 lc rgb "#d62728" pt 5 ps 1.4
set style line 3 lc rgb "#555555" dt 2
plot f(x) with lines ls 3 title "y = x", \
     f(x) * 1.1 with lines lc rgb "#bbbbbb" dt 3 title "+-10%", f(x) * 0.9 with lines lc rgb "#bbbbbb" dt 3 notitle, \
     "sim_vs_measured.csv" every ::1 using (strcol(3) eq "fit" ? $4 : NaN):5 with points ls 2 title "fitted (2 runs)", \
     "" every ::1 using (strcol(3) ne "fit" ? $4 : NaN):5 with points ls 1 title "predicted (10 runs)", \
     "" every ::1 using 4:5:($4 > 0.15 ? strcol(1) : "") with labels font ",8" offset char 0.6,0 left notitle
