# Tangled from chapters/94-trainer-plumbing.nw; edit the chapter, not this file.
# Seconds per step by operation, forward, backward and update stacked.
set datafile separator ','
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb 'black'
set boxwidth 0.6
set ylabel 'milliseconds per step'
set xtics rotate by 35 right nomirror scale 0
set bmargin 5
set key top left Left reverse
set grid ytics
file = data.'/06-profile.csv'
# Headroom above the tallest stack, a sixth of its height, from the data.
stats file skip 1 using (1000*($2 + $3 + $4)) nooutput
set yrange [0:STATS_max * 7 / 6]
plot file skip 1 using ($2*1000):xtic(1) title 'forward' lc rgb '#4477aa', \
     ''   skip 1 using ($3*1000) title 'backward' lc rgb '#ee6677', \
     ''   skip 1 using ($4*1000) title 'update' lc rgb '#228833'
