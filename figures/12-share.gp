# Tangled from chapters/99gq-precision-runs.nw; edit the chapter, not this file.
# fp16 without the scaler at S = 2^-k: the gradients flushed (top) and
# the loss after the same steps (bottom), against k.
set datafile separator ','
shares = data.'/12-share.csv'
lines = data.'/12-share-lines.csv'
predicted = data.'/12-share-predicted.csv'
stats lines using 1 nooutput
fp32 = STATS_min
stats lines using 2 nooutput
unigram = STATS_min
stats lines using 3 nooutput
bf16 = STATS_min
stats lines using 4 nooutput
scaled = STATS_min
stats lines using 5 nooutput
most = STATS_min
stats lines using 6 nooutput
k_a = STATS_min
stats lines using 7 nooutput
k_b = STATS_min
set xrange [-0.5 : most + 0.5]
set xtics 2
set style line 1 lc rgb '#888888' dt 3 lw 1
set arrow 1 from k_a, graph 0 to k_a, graph 1 nohead ls 1
set arrow 2 from k_b, graph 0 to k_b, graph 1 nohead ls 1
set multiplot
set lmargin 10
set size 1, 0.5
set origin 0, 0.5
set format x ''
set ylabel 'flushed, \%'
set yrange [0:105]
set label 1 'A' at k_a, graph 1.06 center front
set label 2 'B' at k_b, graph 1.06 center front
set key inside left top Left reverse samplen 2 spacing 1.1 opaque
plot predicted using 1:(100 * $2) with lines lw 1.5 lc rgb '#ee6677' \
         title 'activations, predicted', \
     shares using 1:(100 * $4) with points pt 7 ps 0.6 lc rgb '#ee6677' \
         title 'activations, lost', \
     predicted using 1:(100 * $3) with lines lw 1.5 lc rgb '#4477aa' \
         title 'parameters, predicted', \
     shares using 1:(100 * $6) with points pt 5 ps 0.6 lc rgb '#4477aa' \
         title 'parameters, lost'
unset label 1
unset label 2
set size 1, 0.5
set origin 0, 0
set format x '%g'
set xlabel '$k$: the step averages over $2^k$ times this model' . "'" . 's tokens'
set ylabel 'validation loss'
set autoscale y
set ytics 0.5
# The two runs at the largest k, set either side of it so both show.
set key at graph 0.02, graph 0.75 left top Left reverse samplen 2 \
    spacing 1.1 maxrows 3 opaque
plot fp32 with lines lc rgb '#000000' lw 1 title 'fp32', \
     unigram with lines lc rgb '#888888' dt 2 lw 1 title 'unigram', \
     shares using 1:7 with linespoints pt 7 ps 0.6 lw 1.5 \
         lc rgb '#ee6677' title 'fp16, no scaler', \
     lines using ($5 - 0.3):4 with points pt 9 ps 1 lc rgb '#228833' \
         title 'fp16, scaler', \
     lines using ($5 + 0.3):3 with points pt 13 ps 1 lc rgb '#4477aa' \
         title 'bf16'
unset multiplot
