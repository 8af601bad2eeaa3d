# Tangled from chapters/95-parallel-plumbing.nw; edit the chapter, not this file.
# All-reduce bus bandwidth against size: ring, MPICH, and memcpy.
set datafile separator ','
set logscale x 2
set format x '%.0b%B'
set xlabel 'buffer size (bytes)'
set ylabel 'bus bandwidth (GB/s)'
set key top right reverse Left samplen 2 spacing 1.2
set grid xtics ytics
file = data.'/07-allreduce-2.csv'
rows(impl) = sprintf('< awk -F, ''$1 == "allreduce" && $2 == "%s"'' %s', impl, file)
stats file using (strcol(1) eq 'memcpy' ? $7 : 1/0) nooutput
copy = STATS_max
set yrange [0:copy * 1.6]   # room above the ceiling for the key
plot rows('ring') using 3:7 with linespoints pt 7 ps 0.5 lw 2 \
         lc rgb '#4477aa' title 'ring', \
     rows('mpi') using 3:7 with linespoints pt 5 ps 0.5 lw 2 \
         lc rgb '#ee6677' title 'MPICH', \
     copy with lines dt 2 lw 2 lc rgb '#228833' title 'memcpy, one core'
