# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# Training state per GPU against data-parallel ranks, one line per stage.
set datafile separator ','
set logscale xy
set xlabel 'data-parallel ranks'
set ylabel 'state per GPU' offset -1.5,0
set format y '%.0s %cB'
set lmargin 11
set format x '%.0f'
set xtics (1, 8, 64, 512, '4,096' 4096, '32,768' 32768)  # grouped
set key top right
set grid xtics ytics
file = data.'/03-zero.csv'
plot file skip 1 using 1:2 with lines lw 2 lc rgb '#4477aa' title 'stage 0', \
     ''   skip 1 using 1:3 with lines lw 2 lc rgb '#ee6677' title 'stage 1', \
     ''   skip 1 using 1:4 with lines lw 2 lc rgb '#228833' title 'stage 2', \
     ''   skip 1 using 1:5 with lines lw 2 lc rgb '#ccbb44' title 'stage 3', \
     80e9 with lines dt 2 lc rgb 'black' title '80 GB'
