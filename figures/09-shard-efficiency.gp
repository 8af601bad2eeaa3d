# Tangled from chapters/96-tensor-parallel-plumbing.nw; edit the chapter, not this file.
# Shard efficiency against t: minigpt's block and the scaled 100B-class
# block, median and spread of the repeats; the dashed line is 1.
set datafile separator ','
set logscale x 2
set xrange [0.85:9.5]
set xtics (1, 2, 4, 8)
set xlabel 'tensor-parallel degree $t$'
set ylabel 'shard efficiency'
set key bottom left reverse Left samplen 2 spacing 1.3
set grid ytics
mini = data.'/09-shards-minigpt.csv'
big = data.'/09-shards-scaled.csv'
stats mini skip 1 using 4 nooutput
top = STATS_max
stats big skip 1 using 4 nooutput
top = STATS_max > top ? STATS_max : top
stats mini skip 1 using 3 nooutput
bottom = STATS_min
stats big skip 1 using 3 nooutput
bottom = STATS_min < bottom ? STATS_min : bottom
set yrange [(bottom < 0.5 ? 0 : 0.5):(top > 1.1 ? top * 1.05 : 1.15)]
# The two shapes sit a little apart in x, so that their bars do not hide
# one another.
plot 1 with lines dt 2 lw 1 lc rgb '#888888' title 'perfect division', \
     mini skip 1 using ($1 * 0.97):2:3:4 with yerrorlines pt 7 ps 0.7 \
         lw 2 lc rgb '#4477aa' title 'minigpt'."'".'s block', \
     big skip 1 using ($1 * 1.03):2:3:4 with yerrorlines pt 5 ps 0.7 \
         lw 2 lc rgb '#ee6677' title '100B-class block, scaled'
