# Tangled from chapters/99d-hierarchical.nw; edit the chapter, not this file.
# The flat ring against the hierarchical all-reduce on four ranks in two
# groups, the link between groups slowed: measured (points) and the
# planner's prediction (lines), time against size, both axes logarithmic.
set datafile separator ','
set logscale x 2
set logscale y 10
set format y '%g'
set xlabel 'buffer size (bytes)'
set ylabel 'time per all-reduce (ms)'
set key bottom right reverse Left samplen 2 spacing 1.3 opaque
set grid xtics ytics
set offsets graph 0.03, graph 0.03, 0, 0
file = data.'/11-hierarchical.csv'
size_label(b) = b >= 1048576 ? sprintf('%gMi', b / 1048576) \
                             : sprintf('%gKi', b / 1024)
set xtics ()
stats file using 1 skip 1 nooutput
do for [e = int(log(STATS_min) / log(2) + 0.5) : \
            int(log(STATS_max) / log(2) + 0.5) : 2] {
    eval sprintf('set xtics add ("%s" %d)', size_label(2**e), 2**e)
}
plot file skip 1 using 1:($2 * 1e3) with points pt 7 ps 0.8 \
         lc rgb '#4477aa' title 'flat ring, measured', \
     file skip 1 using 1:($4 * 1e3) with lines lw 2 dt 2 \
         lc rgb '#4477aa' title 'flat ring, predicted', \
     file skip 1 using 1:($3 * 1e3) with points pt 5 ps 0.8 \
         lc rgb '#ee6677' title 'hierarchical, measured', \
     file skip 1 using 1:($5 * 1e3) with lines lw 2 dt 2 \
         lc rgb '#ee6677' title 'hierarchical, predicted'
