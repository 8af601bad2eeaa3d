# Tangled from chapters/99h-reliability-plumbing.nw; edit the chapter, not this file.
# The effective training fraction against the checkpoint interval:
# simulated (points, two standard errors each way), the closed form
# (line), Young's and Daly's intervals (vertical lines), the best (cross).
set datafile separator ','
simulated = data.'/13-interval.csv'
closed = data.'/13-interval-closed.csv'
marks = data.'/13-interval-marks.csv'
stats marks using 1 skip 1 nooutput
young = STATS_min / 60
stats marks using 2 skip 1 nooutput
daly = STATS_min / 60
stats marks using 3 skip 1 nooutput
best = STATS_min / 60
stats marks using 4 skip 1 nooutput
best_fraction = 100 * STATS_min
set logscale x
set autoscale xfix
set xlabel 'checkpoint interval $\tau$ (min)'
set ylabel 'effective training fraction (\%)'
set key bottom center Left reverse samplen 2 spacing 1.3 opaque
set grid xtics ytics
set arrow 1 from young, graph 0 to young, graph 1 nohead dt 2 \
    lc rgb '#228833'
set arrow 2 from daly, graph 0 to daly, graph 1 nohead dt 3 \
    lc rgb '#aa3377'
set label 1 'Young' at young, graph 0.5 left offset 0.5, 0 \
    tc rgb '#228833'
set label 2 'Daly' at daly, graph 0.3 right offset -0.5, 0 \
    tc rgb '#aa3377'
plot closed skip 1 using ($1 / 60):($2 * 100) with lines lw 2 \
         lc rgb '#4477aa' title 'closed form, $\tau/E(\tau)$', \
     simulated skip 1 using ($1 / 60):($2 * 100):(2 * $3 * 100) \
         with yerrorbars pt 7 ps 0.7 lc rgb '#ee6677' title 'simulated', \
     '+' using (best):(best_fraction) every ::0::0 with points pt 2 \
         ps 2 lw 2 lc rgb '#000000' title 'best interval'
