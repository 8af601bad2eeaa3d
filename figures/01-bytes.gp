# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# Bytes of state per parameter, stacked by term, for each convention.
# The CSV's first line names its columns: it is a header, not a bar.
set datafile separator ','
set datafile columnheaders
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb 'black'
set boxwidth 0.6
set ylabel 'bytes per parameter'
set yrange [0:23]
set ytics 4
# The key sits above the bars, where no bar or label can reach it, and the
# bars keep the whole width, so that their names do not run together.
set key above horizontal maxcols 3 reverse Left samplen 1.5 width 1 spacing 1.5
set grid ytics
file = data.'/01-precisions.csv'
plot file using 3:xtic(1) title 'weights'                  lc rgb '#4477aa', \
     ''   using 4         title 'gradients'                lc rgb '#66ccee', \
     ''   using 5         title 'fp32 master weights'      lc rgb '#228833', \
     ''   using 6         title 'fp32 gradient accumulator' lc rgb '#ccbb44', \
     ''   using 7         title 'Adam moments $m$, $v$'    lc rgb '#ee6677', \
     ''   using 0:8:(sprintf('%g', $8)) with labels offset 0,0.8 notitle
