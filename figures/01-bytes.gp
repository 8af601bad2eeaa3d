# Tangled from chapters/01-memory-floor.nw; edit the chapter, not this file.
# Bytes of state per parameter, stacked by term, for each convention.
set datafile separator ','
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb 'black'
set boxwidth 0.6
set ylabel 'bytes per parameter'
set yrange [0:34]
set ytics 4
set key top left vertical reverse Left samplen 1.5 spacing 1.6
set grid ytics
file = data.'/01-precisions.csv'
plot file using 3:xtic(1) title 'weights'                  lc rgb '#4477aa', \
     ''   using 4         title 'gradients'                lc rgb '#66ccee', \
     ''   using 5         title 'fp32 master weights'      lc rgb '#228833', \
     ''   using 6         title 'fp32 gradient accumulator' lc rgb '#ccbb44', \
     ''   using 7         title 'Adam moments $m$, $v$'    lc rgb '#ee6677', \
     ''   using 0:8:(sprintf('%g', $8)) with labels offset 0,0.8 notitle
