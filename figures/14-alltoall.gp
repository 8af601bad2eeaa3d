# Tangled from chapters/99k-experts-plumbing.nw; edit the chapter, not this file.
# The all-to-all's bus bandwidth against size, the pairwise exchange and
# MPICH's, beside the all-reduce's (ring and MPICH's) from the same run on
# this machine; both axes logarithmic.
set datafile separator ','
set logscale x 2
set logscale y 10
set format y '%g'
set xlabel 'size per rank (bytes)'
set ylabel 'bus bandwidth (GB/s)'
set key bottom right reverse Left samplen 2 spacing 1.3 opaque
set grid xtics ytics
set offsets graph 0.03, graph 0.03, 0, 0
file = data.'/14-alltoall.csv'
size_label(b) = b >= 1048576 ? sprintf('%gMi', b / 1048576) \
              : b >= 1024 ? sprintf('%gKi', b / 1024) : sprintf('%g', b)
set xtics ()
stats file using 1 skip 1 nooutput
do for [e = int(log(STATS_min) / log(2) + 0.5) : \
            int(log(STATS_max) / log(2) + 0.5) : 2] {
    eval sprintf('set xtics add ("%s" %d)', size_label(2**e), 2**e)
}
plot file skip 1 using 1:2 with linespoints pt 7 ps 0.8 lw 2 \
         lc rgb '#ee6677' title 'all-to-all, pairwise', \
     file skip 1 using 1:3 with linespoints pt 5 ps 0.8 lw 2 dt 2 \
         lc rgb '#ee6677' title 'all-to-all, MPICH', \
     file skip 1 using 1:4 with linespoints pt 7 ps 0.8 lw 2 \
         lc rgb '#4477aa' title 'all-reduce, ring', \
     file skip 1 using 1:5 with linespoints pt 5 ps 0.8 lw 2 dt 2 \
         lc rgb '#4477aa' title 'all-reduce, MPICH'
