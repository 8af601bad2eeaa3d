# Tangled from chapters/99gq-precision-runs.nw; edit the chapter, not this file.
# Validation loss against step, a line per precision (top); each one's
# difference from fp32's (bottom). A column per run, named in its header.
set datafile separator ','
losses = data.'/12-val_loss.csv'
stats losses skip 1 nooutput
runs = STATS_columns
colours = '#000000 #4477aa #228833 #ee6677 #aa3377'
points = '7 5 9 11 13'
set multiplot
set lmargin 10
set size 1, 0.62
set origin 0, 0.38
set format x ''
set ylabel 'validation loss'
set key inside right top Left reverse spacing 1.2 samplen 2
set grid ytics lw 0.5 lc rgb '#cccccc'
plot for [i = 2:runs] losses using 1:i with linespoints \
         pt (word(points, i - 1) + 0) ps 0.6 lw 1.5 \
         lc rgb word(colours, i - 1) title columnheader(i)
set size 1, 0.4
set origin 0, 0
set format x '%g'
# Two to five tics on the differences, whatever their size.
low = 0
high = 0
do for [i = 3:runs] {
    stats losses skip 1 using (column(i) - column(2)) nooutput
    low = STATS_min < low ? STATS_min : low
    high = STATS_max > high ? STATS_max : high
}
span = high - low > 0 ? high - low : 1e-3
tic = 10**floor(log10(span))
tic = span / tic > 5 ? 2 * tic : span / tic < 2 ? tic / 2 : tic
set ytics tic
set xlabel 'step'
set ylabel 'minus fp32'
unset key
plot 0 with lines lc rgb '#000000' dt 2 notitle, \
     for [i = 3:runs] losses using 1:(column(i) - column(2)) \
         with linespoints pt (word(points, i - 1) + 0) ps 0.6 lw 1.5 \
         lc rgb word(colours, i - 1) notitle
unset multiplot
