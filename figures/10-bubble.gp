# Tangled from chapters/98c-pipeline-runs.nw; edit the chapter, not this file.
# The bubble against the micro-batches: measured (filled), replayed (open),
# and the formulas (lines); each schedule's points a little apart in M.
set datafile separator ','
set logscale x 2
set xrange [0.8:20]
set xtics (1, 2, 4, 8, 16)
set yrange [0:1]
set xlabel 'micro-batches $M$'
set ylabel 'bubble (share of $P \times$ step)'
set key top right maxrows 4 width -3 samplen 2
runs = data.'/10-bubble.csv'
at(s, x) = strcol('schedule') eq s ? x : NaN
m(shift) = column('m') * shift
plot data.'/10-bubble-formula.csv' using 'm':'gpipe' with lines \
         lc rgb '#000000' title 'formula: GPipe, 1F1B', \
     '' using 'm':'interleaved' with lines dt 2 lc rgb '#228833' \
         title 'interleaved', \
     '' using 'm':'zb' with lines dt 3 lc rgb '#aa3377' title 'zb-h1', \
     runs using (m(0.94)):(at('gpipe', column('measured'))) \
         with points pt 7 lc rgb '#4477aa' title 'GPipe', \
     runs using (m(0.98)):(at('1f1b', column('measured'))) \
         with points pt 5 lc rgb '#ee6677' title '1F1B', \
     runs using (m(1.02)):(at('interleaved', column('measured'))) \
         with points pt 9 lc rgb '#228833' title 'interleaved', \
     runs using (m(1.06)):(at('zb-h1', column('measured'))) \
         with points pt 13 lc rgb '#aa3377' title 'zb-h1', \
     runs using (m(0.94)):(at('gpipe', column('replayed'))) \
         with points pt 6 lc rgb '#4477aa' notitle, \
     runs using (m(0.98)):(at('1f1b', column('replayed'))) \
         with points pt 4 lc rgb '#ee6677' notitle, \
     runs using (m(1.02)):(at('interleaved', column('replayed'))) \
         with points pt 8 lc rgb '#228833' notitle, \
     runs using (m(1.06)):(at('zb-h1', column('replayed'))) \
         with points pt 12 lc rgb '#aa3377' notitle
