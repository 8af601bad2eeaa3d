# Tangled from chapters/99gq-precision-runs.nw; edit the chapter, not this file.
# fp16 without the scaler at S = 2^-k: the gradients flushed (top) and
# how far the loss after the same steps ended above fp32's (bottom),
# against k.
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
# The loss minus fp32's, on a logarithmic axis from half a decade below
# the smallest difference; a run that ended below fp32 sits just above
# the axis, as an open mark.
stats lines using 8 nooutput
yard = STATS_min
stats shares using (abs($7 - fp32) > 0 ? abs($7 - fp32) : 1/0) nooutput
smallest = STATS_min
if (abs(scaled - fp32) > 0 && abs(scaled - fp32) < smallest) \
    smallest = abs(scaled - fp32)
if (abs(bf16 - fp32) > 0 && abs(bf16 - fp32) < smallest) \
    smallest = abs(bf16 - fp32)
low = 10 ** floor(log10(smallest) - 0.5)
above(x) = x - fp32 > 0 ? x - fp32 : 1/0
below(x) = x - fp32 > 0 ? 1/0 : 2 * low
mark(x) = x - fp32 > 0 ? x - fp32 : 2 * low
set logscale y
set yrange [low : 1e4 * (unigram - fp32)]     # room above for the key
set format y '$10^{%T}$'
set ytics 10 ** floor(log10(low)), 1000
set ylabel 'loss $-$ fp32' . "'" . 's' offset -1.5, 0
set key at graph 0.02, graph 0.98 left top Left reverse samplen 2 \
    spacing 1.1 maxrows 2
set label 3 'unigram' at 9, 3 * (unigram - fp32) center front
set label 4 'rounding' . "'" . 's band' at -0.3, 2.5 * yard left front
# The two runs at the largest k, set either side of it so both show.
plot unigram - fp32 with lines lc rgb '#888888' dt 2 lw 1 notitle, \
     yard with lines lc rgb '#000000' dt 3 lw 1 notitle, \
     shares using 1:(above($7)) with linespoints pt 7 ps 0.6 lw 1.5 \
         lc rgb '#ee6677' title 'fp16, no scaler', \
     shares using 1:(below($7)) with points pt 6 ps 0.8 lc rgb '#ee6677' \
         title 'below fp32', \
     lines using ($5 - 0.3):(mark($4)) with points pt 9 ps 1 \
         lc rgb '#228833' title 'fp16, scaler', \
     lines using ($5 + 0.3):(mark($3)) with points pt 13 ps 1 \
         lc rgb '#4477aa' title 'bf16'
unset multiplot
