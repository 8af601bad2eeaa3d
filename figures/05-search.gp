# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# Every layout the planner evaluated: step time against memory per GPU.
set datafile separator ','
set logscale x
set xlabel 'memory per GPU (GB)'
set ylabel 'predicted step (s)'
# From 10 GB, the left edge the caption counts from, to a fifth beyond the
# largest layout.
s = data.'/05-search.csv'
stats s using (column('memory_per_gpu_bytes')/1e9) nooutput
set xrange [10 * (1 - 1e-9):1.2 * STATS_max]   # 10 itself gets its tick
set xtics (10, 20, 50, 100, 200, 500, '1,000' 1000, '2,000' 2000, \
           '5,000' 5000)                        # grouped, as in the text
set yrange [3:12]
set grid xtics ytics
set key outside right top vertical Left reverse samplen 1 spacing 1.5
set arrow from 80, graph 0 to 80, graph 1 nohead dt 2 lw 2 lc rgb '#000000'
mem(x) = column('memory_per_gpu_bytes')/1e9
# The key's markers are drawn larger than the plot's, where they can be seen.
plot s using (column('pp') > 1 ? mem(0) : 1/0):'step_time_s' with points \
       pt 7 ps 0.35 lc rgb '#ee6677' notitle, \
     s using (column('pp') == 1 ? mem(0) : 1/0):'step_time_s' with points \
       pt 5 ps 0.35 lc rgb '#4477aa' notitle, \
     NaN with points pt 7 ps 1 lc rgb '#ee6677' title 'pipelined', \
     NaN with points pt 5 ps 1 lc rgb '#4477aa' title 'not pipelined'
