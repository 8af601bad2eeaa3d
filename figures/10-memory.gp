# Tangled from chapters/98c-pipeline-runs.nw; edit the chapter, not this file.
# Activations held at the peak on each stage, GPipe, 1F1B and zb-h1.
set datafile separator ','
set datafile columnheaders
set style data histograms
set style histogram clustered gap 1
set style fill solid 1.0 border lc rgb '#ffffff'
set boxwidth 0.9
set yrange [0:*]
set xlabel 'stage'
set ylabel 'activations held (kB)'
set key above horizontal reverse Left samplen 2
plot data.'/10-memory.csv' using ($2 / 1e3):xtic(1) lc rgb '#4477aa' \
         title 'GPipe', \
     '' using ($3 / 1e3) lc rgb '#ee6677' title '1F1B', \
     '' using ($4 / 1e3) lc rgb '#aa3377' title 'zb-h1'
