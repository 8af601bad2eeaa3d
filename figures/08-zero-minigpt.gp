# Tangled from chapters/95-parallel-plumbing.nw; edit the chapter, not this file.
# minigpt's training state per rank against ranks: formula lines, measured
# points (filled: the state; open: with the buffers). Megabytes, so that
# the tick labels stay short and the axis label clear of them; the key
# outside, clear of the points.
set datafile separator ','
set logscale x 2
set xrange [0.9:4.4]
set xtics (1, 2, 4)
set xlabel 'data-parallel ranks'
set ylabel 'MB per rank'
set format y '%.1f'
set key outside right top reverse Left samplen 2 spacing 1.3
set grid xtics ytics
set offsets 0, 0, graph 0.05, graph 0.05
colours = "#4477aa #ee6677 #228833 #ccbb44"
lines = data.'/08-zero-minigpt-formula.csv'
points = data.'/08-zero-minigpt.csv'
# The points of the four stages sit a little apart in x, so that equal
# values at one and two ranks do not hide one another.
apart(x, s) = x * 2**((s - 1.5) * 0.05)
plot for [s=0:3] lines skip 1 using 1:(column(s+2) / 1e6) with lines lw 2 \
         lc rgb word(colours, s+1) title sprintf('stage %d', s), \
     for [s=0:3] points skip 1 \
         using ($2 == s ? apart($1, s) : NaN):($3 / 1e6) \
         with points pt 7 ps 1.2 lc rgb word(colours, s+1) notitle, \
     for [s=0:3] points skip 1 \
         using ($2 == s ? apart($1, s) : NaN):($4 / 1e6) \
         with points pt 6 ps 1.6 lc rgb word(colours, s+1) notitle, \
     NaN with points pt 7 ps 1.2 lc rgb 'black' title 'state held', \
     NaN with points pt 6 ps 1.6 lc rgb 'black' title 'with buffers'
