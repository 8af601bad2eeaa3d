# Tangled from chapters/95-parallel-plumbing.nw; edit the chapter, not this file.
# All-reduce bus bandwidth against size: ring, MPICH, and memcpy. Both axes
# are logarithmic, so that the latency-bound small sizes show. The y axis
# runs from half the slowest row to twice the copy ceiling; the key sits at
# the bottom right, below the large rows, which all run far above the
# small ones.
set datafile separator ','
set logscale x 2
set logscale y 10
set format y '%g'
set xlabel 'buffer size (bytes)'
set ylabel 'bus bandwidth (GB/s)'
set key bottom right reverse Left samplen 2 spacing 1.3 opaque
set grid xtics ytics
set offsets graph 0.03, graph 0.03, 0, 0
file = data.'/07-allreduce-2.csv'
rows(impl) = sprintf('< awk -F, ''$1 == "allreduce" && $2 == "%s"'' %s', \
                     impl, file)
stats file using (strcol(1) eq 'memcpy' ? $7 : 1/0) nooutput
copy = STATS_max
stats file using (strcol(1) eq 'allreduce' ? $7 : 1/0) nooutput
slowest = STATS_min
# Size ticks every factor of 8, down from the largest size, labelled with
# binary prefixes: 64Mi, 8Mi, 1Mi, 128Ki, ... (stats before the yrange is
# set, which would filter what it reads)
stats file using (strcol(1) eq 'allreduce' ? $3 : 1/0) nooutput
top = int(log(STATS_max) / log(2) + 0.5)
bottom = int(log(STATS_min) / log(2) + 0.5)
size_label(e) = e >= 20 ? sprintf('%dMi', 2**(e - 20)) \
              : e >= 10 ? sprintf('%dKi', 2**(e - 10)) : sprintf('%d', 2**e)
ticks = ''
do for [e = top:bottom:-3] {
    sep = ticks eq '' ? '' : ', '
    ticks = ticks.sep.sprintf('"%s" %d', size_label(e), 2**e)
}
eval 'set xtics ('.ticks.')'
set yrange [slowest / 2:copy * 2]
plot rows('ring') using 3:7 with linespoints pt 7 ps 0.5 lw 2 \
         lc rgb '#4477aa' title 'ring', \
     rows('mpi') using 3:7 with linespoints pt 5 ps 0.5 lw 2 \
         lc rgb '#ee6677' title 'MPICH', \
     copy with lines dt 2 lw 2 lc rgb '#228833' title 'memcpy, one core'
