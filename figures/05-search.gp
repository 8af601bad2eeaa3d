# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# Every layout the planner evaluated: step time against memory per GPU.
set datafile separator ','
set logscale x
set xlabel 'memory per GPU (GB)'
set ylabel 'predicted step (s)'
set xrange [10:10000]
set xtics (10, 100, '1,000' 1000, '10,000' 10000)     # grouped, as in the text
set yrange [3:12]
set grid xtics ytics
set key top left
set arrow from 80, graph 0 to 80, graph 1 nohead dt 2 lw 2 lc rgb '#000000'
s = data.'/05-search.csv'
mem(x) = column('memory_per_gpu_bytes')/1e9
plot s using (column('pp') > 1 ? mem(0) : 1/0):'step_time_s' with points \
       pt 7 ps 0.35 lc rgb '#ee6677' title 'pipelined', \
     s using (column('pp') == 1 ? mem(0) : 1/0):'step_time_s' with points \
       pt 5 ps 0.35 lc rgb '#4477aa' title 'not pipelined'
