# Tangled from chapters/95-parallel-plumbing.nw; edit the chapter, not this file.
# minigpt's training state per rank against ranks: formula lines, measured
# points (filled: the state; open: with the buffers).
set datafile separator ','
set logscale x 2
set xrange [0.9:4.4]
set xtics (1, 2, 4)
set xlabel 'data-parallel ranks'
set ylabel 'bytes per rank' offset -1.5,0
set format y '%.1s %cB'
set lmargin 11
set key bottom left
set grid xtics ytics
colours = "#4477aa #ee6677 #228833 #ccbb44"
lines = data.'/08-zero-minigpt-formula.csv'
points = data.'/08-zero-minigpt.csv'
plot for [s=0:3] lines skip 1 using 1:(column(s+2)) with lines lw 2 \
         lc rgb word(colours, s+1) title sprintf('stage %d', s), \
     for [s=0:3] points skip 1 using ($2 == s ? $1 : NaN):3 with points \
         pt 7 ps 1.2 lc rgb word(colours, s+1) notitle, \
     for [s=0:3] points skip 1 using ($2 == s ? $1 : NaN):4 with points \
         pt 6 ps 1.6 lc rgb word(colours, s+1) notitle
