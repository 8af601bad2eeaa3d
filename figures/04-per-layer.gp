# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# Activation bytes per layer per GPU against sequence length, by recomputation.
set datafile separator ','
set logscale xy
set xlabel 'tokens per sequence'
set ylabel 'GB per layer per GPU'
set xtics ('512' 512, '2,048' 2048, '8,192' 8192, '32,768' 32768, \
           '131,072' 131072)
set ytics ('0.001' 0.001, '0.01' 0.01, '0.1' 0.1, '1' 1, '10' 10, '100' 100, \
           '1,000' 1000, '10,000' 10000)          # grouped, as in the text
set xrange [512:131072]
set grid xtics ytics
set key top left reverse Left spacing 1.5 samplen 2 opaque
file = data.'/04-per-layer.csv'
plot file using 1:($2/1e9) with linespoints pt 7 ps 0.6 lw 2 lc rgb '#ee6677' \
          title 'no recomputation', \
     ''   using 1:($3/1e9) with linespoints pt 7 ps 0.6 lw 2 lc rgb '#4477aa' \
          title 'selective', \
     ''   using 1:($4/1e9) with linespoints pt 7 ps 0.6 lw 2 lc rgb '#228833' \
          title 'full'
