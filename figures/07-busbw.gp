# Tangled from chapters/95-parallel-plumbing.nw; edit the chapter, not this file.
# All-reduce bus bandwidth against size: ring, MPICH, and memcpy. Both axes
# are logarithmic, so that the latency-bound small sizes show; the key sits
# above the copy ceiling, which no large row reaches.
set datafile separator ','
set logscale x 2
set logscale y 10
set format x '%.0b%B'
set format y '%g'
set xlabel 'buffer size (bytes)'
set ylabel 'bus bandwidth (GB/s)'
set key top left reverse Left samplen 2 spacing 1.3
set grid xtics ytics
set offsets graph 0.03, graph 0.03, 0, 0
file = data.'/07-allreduce-2.csv'
rows(impl) = sprintf('< awk -F, ''$1 == "allreduce" && $2 == "%s"'' %s', \
                     impl, file)
stats file using (strcol(1) eq 'memcpy' ? $7 : 1/0) nooutput
copy = STATS_max
stats file using (strcol(1) eq 'allreduce' ? $7 : 1/0) nooutput
slowest = STATS_min
set yrange [slowest / 2:copy * 100]    # two decades above the ceiling
plot rows('ring') using 3:7 with linespoints pt 7 ps 0.5 lw 2 \
         lc rgb '#4477aa' title 'ring', \
     rows('mpi') using 3:7 with linespoints pt 5 ps 0.5 lw 2 \
         lc rgb '#ee6677' title 'MPICH', \
     copy with lines dt 2 lw 2 lc rgb '#228833' title 'memcpy, one core'
