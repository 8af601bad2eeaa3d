# Tangled from chapters/99f-measured-plumbing.nw; edit the chapter, not this file.
# Stacked step breakdowns: each timed layout's measured bar (solid) beside
# its predicted bar (pale), the parts in milliseconds.
set datafile separator ','
bars = data.'/11-mesh-bars.csv'
set style fill solid 1.0 border lc rgb '#333333'
set boxwidth 0.9
set ylabel 'step (ms)'
set yrange [0:*]
set key outside right top Left reverse samplen 1.5 spacing 1.4
set xtics scale 0
set offsets 0.5, 0.5, 0, 0
layout(t, p, d) = sprintf('$%d{\times}%d{\times}%d$', t, p, d)
m(x) = strcol('kind') eq 'measured' ? x : NaN
p(x) = strcol('kind') eq 'predicted' ? x : NaN
tops = 'other_top optimizer_top bubble_top dp_top pp_top tp_top compute'
names = 'other optimizer bubble DP PP TP compute'
colours = '#bbbbbb #aa3377 #ccbb44 #228833 #66ccee #ee6677 #4477aa'
pales = '#e4e4e4 #dda4c9 #eae3a9 #9fd6a8 #c2ebf5 #f7b8c0 #a9c2dd'
plot for [i = 1:7] bars using 'x':(m(column(word(tops, i)))) \
         with boxes lc rgb word(colours, i) title word(names, i), \
     for [i = 1:7] bars using 'x':(p(column(word(tops, i)))) \
         with boxes lc rgb word(pales, i) notitle, \
     bars using ($1 + 0.5):(0):xtic(m(1) == 1 ? layout(column('tp'), \
         column('pp'), column('dp')) : '') with points ps 0 notitle
