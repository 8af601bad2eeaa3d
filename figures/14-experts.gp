# Tangled from chapters/99l-moe-layer-plumbing.nw; edit the chapter, not this file.
# Token-slots routed to each expert by the balanced and the skewed router
# (bars), and each capacity factor's capacity (lines): what is above a
# line is dropped.
set datafile separator ','
file = data.'/14-experts.csv'
stats file using 1 skip 1 nooutput name 'expert'
stats file using 4 skip 1 nooutput name 'low'
stats file using 5 skip 1 nooutput name 'high'
stats file using 6 skip 1 nooutput name 'factor_low'
stats file using 7 skip 1 nooutput name 'factor_high'
set style fill solid 0.85 border -1
set boxwidth 0.38
set xrange [expert_min - 0.6 : expert_max + 0.6]
set yrange [0 : *]
set xtics 1
set xlabel 'expert'
set ylabel 'token-slots routed'
set key top right reverse Left samplen 2 spacing 1.3 opaque
set grid ytics
plot file skip 1 using ($1 - 0.2):2 with boxes lc rgb '#4477aa' \
         title 'balanced router', \
     file skip 1 using ($1 + 0.2):3 with boxes lc rgb '#ee6677' \
         title 'skewed router', \
     low_max with lines lw 2 dt 2 lc rgb '#222222' \
         title sprintf('capacity, $F = %g$', factor_low_max), \
     high_max with lines lw 2 dt 1 lc rgb '#222222' \
         title sprintf('capacity, $F = %g$', factor_high_max)
