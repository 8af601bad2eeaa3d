# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# Training state per GPU against data-parallel ranks, one line per stage.
set datafile separator ','
set logscale xy
set xlabel 'data-parallel ranks'
set ylabel 'state per GPU' offset -3.5,0
set format y '%.0s %cB'
set lmargin 14
set format x '%.0f'
set xtics (1, 8, 64, 512, '4,096' 4096, '32,768' 32768)  # grouped
set key bottom left reverse Left samplen 2 spacing 1.5
set grid xtics ytics
file = data.'/03-zero.csv'
# The usable memory of one GPU, as fleet memory computes it for the floor.
card = data.'/03-zero-card.csv'
set datafile columnheaders
stats card using (column('usable_bytes_per_gpu')) nooutput
set datafile nocolumnheaders
usable = STATS_max
plot file skip 1 using 1:2 with lines lw 2 lc rgb '#4477aa' title 'stage 0', \
     ''   skip 1 using 1:3 with lines lw 2 lc rgb '#ee6677' title 'stage 1', \
     ''   skip 1 using 1:4 with lines lw 2 lc rgb '#228833' title 'stage 2', \
     ''   skip 1 using 1:5 with lines lw 2 lc rgb '#ccbb44' title 'stage 3', \
     usable with lines dt 2 lc rgb 'black' \
         title sprintf('usable per GPU, %.0f GB', usable / 1e9)
