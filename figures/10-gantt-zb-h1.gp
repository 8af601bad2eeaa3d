# Tangled from chapters/98c-pipeline-runs.nw; edit the chapter, not this file.
schedule = 'zb-h1'
set datafile separator ','
measured = data.'/10-gantt-'.schedule.'.csv'
simulated = data.'/10-gantt-'.schedule.'-sim.csv'
stats measured using (column('end_s')) nooutput
last = STATS_max
stats measured using (column('stage')) nooutput
stages = STATS_max + 1
stats simulated using (column('end_s')) nooutput
last = STATS_max > last ? STATS_max : last
set xrange [0:1e3 * last]
set yrange [stages - 0.5:-0.5]
set ytics 1 font ',7'
set xtics font ',7'
set ylabel 'stage'
set key off
set style fill solid 1.0 border lc rgb '#ffffff'
# forward blue, backward red, weight gradient green; second chunk lighter
colour(kind, chunk) = kind eq 'F' ? (chunk != 0 ? 0x99bbdd : 0x4477aa) : \
                      kind eq 'B' ? (chunk != 0 ? 0xf4b0ba : 0xee6677) : \
                      0x228833
wide(x) = (column('end_s') - column('start_s') > 0.045 * last) ? 1 : 0
tag(x) = wide(0) ? sprintf('{\\scriptsize %d}', column('micro_batch')) : ''
middle(x) = 1e3 * (column('start_s') + column('end_s')) / 2
half(x) = 1e3 * (column('end_s') - column('start_s')) / 2
set multiplot layout 2,1 margins 0.11,0.98,0.14,0.93 spacing 0,0.13
set format x ''
set title 'measured: the median step' offset 0,-0.7
plot measured using (middle(0)):'stage':(half(0)):(0.42):\
       (colour(strcol('kind'), column('chunk'))) \
       with boxxyerror lc rgb variable, \
     '' using (middle(0)):'stage':(tag(0)) with labels tc rgb '#000000'
set format x '%g'
set xlabel 'time from the start of the step (ms)' offset 0,0.5
set title 'simulated by fleet pipeline from the measured durations' \
    offset 0,-0.7
plot simulated using (middle(0)):'stage':(half(0)):(0.42):\
       (colour(strcol('kind'), column('chunk'))) \
       with boxxyerror lc rgb variable, \
     '' using (middle(0)):'stage':(tag(0)) with labels tc rgb '#000000'
unset multiplot
