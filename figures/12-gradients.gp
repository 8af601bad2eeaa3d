# Tangled from chapters/99gq-precision-runs.nw; edit the chapter, not this file.
# The first step's gradients by octave: parameters' and activations',
# as computed (solid) and scaled by the loss scale (dashed), against
# fp16's smallest subnormal, smallest normal and largest value.
set datafile separator ','
histogram = data.'/12-histogram-plot.csv'
limits = data.'/12-limits.csv'
stats limits using 1 nooutput
subnormal = STATS_min
stats limits using 2 nooutput
normal = STATS_min
stats limits using 3 nooutput
largest = STATS_min
stats limits using 4 nooutput
bf16 = STATS_min
stats limits using 6 nooutput
shift = STATS_min
stats histogram using 1 nooutput
low = STATS_min
high = STATS_max
set xrange [(low < subnormal ? low : subnormal) - 3 : \
            (high + shift > largest ? high + shift : largest) + 2]
set logscale y
set format y '$10^{%T}$'
set tmargin 2
set xlabel 'binary exponent of $|g|$, $\lfloor \log_2 |g| \rfloor$'
set ylabel 'fraction of elements'
# Room above the curves for the key, in two columns.
set yrange [*:300]
set ytics 1e-12, 10, 1
set key inside left top Left reverse maxrows 2 samplen 1.5 spacing 1.2
set style line 1 lc rgb '#888888' dt 3 lw 1
set arrow 1 from subnormal, graph 0 to subnormal, graph 1 nohead ls 1
set arrow 2 from normal, graph 0 to normal, graph 1 nohead ls 1
set arrow 3 from largest, graph 0 to largest, graph 1 nohead ls 1
set label 1 sprintf('$2^{%d}$', subnormal) at subnormal, graph 1.06 \
    center front
set label 2 sprintf('$2^{%d}$', normal) at normal, graph 1.06 center front
set label 3 sprintf('%.0f', 2**largest) at largest, graph 1.06 center front
set label 4 sprintf('$\leftarrow$ bf16: $2^{%d}$', bf16) \
    at graph 0, graph 1.06 left front
# An octave [2^e, 2^(e+1)) is drawn from e to e + 1.
plot histogram using ($1 + 0.5):($2 > 0 ? $2 : 1/0) with histeps lw 2 \
         lc rgb '#4477aa' title 'parameters', \
     histogram using ($1 + 0.5):($3 > 0 ? $3 : 1/0) with histeps lw 2 \
         lc rgb '#ee6677' title 'activations', \
     histogram using ($1 + 0.5 + shift):($2 > 0 ? $2 : 1/0) with histeps \
         lw 2 dt 2 lc rgb '#4477aa' title 'parameters, scaled', \
     histogram using ($1 + 0.5 + shift):($3 > 0 ? $3 : 1/0) with histeps \
         lw 2 dt 2 lc rgb '#ee6677' title 'activations, scaled'
