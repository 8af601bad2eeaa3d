# Tangled from chapters/96-tensor-parallel-plumbing.nw; edit the chapter, not this file.
# Bytes sent per rank per block per micro-batch against t: the formula's
# curve and the counted points. Kilobytes, so the tick labels stay short.
set datafile separator ','
set logscale x 2
set xrange [0.9:9]
set xtics (1, 2, 4, 8)
set xlabel 'tensor-parallel ranks t'
set ylabel 'kB sent per rank per block'
set yrange [0:*]
set key inside left top reverse Left samplen 2 spacing 1.3
set grid xtics ytics
set offsets 0, 0, graph 0.25, 0
plot data.'/09-tp-bytes-formula.csv' skip 1 using 1:($2 / 1e3) \
         with lines lw 2 lc rgb '#4477aa' title '$8bsh(t-1)/t$, fp32', \
     data.'/09-tp-bytes.csv' skip 1 using ($2 == 0 ? $1 : NaN):($4 / 1e3) \
         with points pt 7 ps 1.4 lc rgb '#ee6677' title 'counted by minigpt', \
     data.'/09-tp-bytes.csv' skip 1 using ($2 == 1 ? $1 : NaN):($4 / 1e3) \
         with points pt 6 ps 2.2 lc rgb '#228833' \
         title 'counted, sequence parallel'
