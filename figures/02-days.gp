# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# Days to train against fleet size, with the floor and the fleet marked.
set datafile separator ','
set logscale xy
set xlabel 'GPUs'
set ylabel 'days to train'
set format x '%.0f'
# Tick labels of 1,000 and more are grouped, as the book writes numbers.
set xtics (8, 32, 128, 512, '2,048' 2048, '8,192' 8192, '65,536' 65536)
set ytics (1, 3, 10, 30, 100, 300, '1,000' 1000, '3,000' 3000, \
           '10,000' 10000)
set xrange [8:65536]
sweep = data.'/02-days.csv'
# The top of the axis follows the data: half again the longest time drawn.
stats sweep using 3 nooutput
set yrange [0.5:1.5 * STATS_max]
set grid xtics ytics
set key off
sweep = data.'/02-days.csv'
marks = data.'/02-fleet.csv'
# A whole number with a comma every three digits: 1,097.
grouped(n) = n < 1000 ? sprintf('%d', n) \
           : grouped(int(n / 1000)) . sprintf(',%03d', n % 1000)
whole(x) = grouped(int(floor(x + 0.5)))
plot sweep using 1:3 with lines lw 2 lc rgb '#4477aa', \
     marks using 'floor_gpus':'floor_days' with points pt 7 ps 1.2 \
           lc rgb '#ee6677', \
     marks using 'gpus':'days' with points pt 7 ps 1.2 lc rgb '#228833', \
     marks using 'floor_gpus':'floor_days':\
       (sprintf('memory floor: %s GPUs, %s days', \
                whole(column('floor_gpus')), whole(column('floor_days')))) \
       with labels left offset 1.2,0.3, \
     marks using 'gpus':'days':\
       (sprintf('%s GPUs, %.1f days', whole(column('gpus')), column('days'))) \
       with labels left offset 1.2,0.3
