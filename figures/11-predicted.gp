# Tangled from chapters/99f-measured-plumbing.nw; edit the chapter, not this file.
# Measured against predicted step, each timed layout a point of its own
# shape and colour, named in the key, with the line y = x.
set datafile separator ','
runs = data.'/11-mesh.csv'
timed(x) = column('timed') == 1 ? 1e3 * x : NaN
stats runs using (timed(column('predicted_step_s'))) nooutput
low = STATS_min; high = STATS_max
rows = STATS_records + STATS_invalid
stats runs using (timed(column('measured_step_s'))) nooutput
low = STATS_min < low ? STATS_min : low
high = STATS_max > high ? STATS_max : high
# Each row's layout, for the key; an untimed row gets no entry.
layout(t, p, d) = sprintf('$%d{\times}%d{\times}%d$', t, p, d)
array name[rows]
do for [i = 1:rows] {
    stats runs every ::i-1::i-1 using 'timed' nooutput
    is_timed = STATS_max
    stats runs every ::i-1::i-1 using 'tp' nooutput
    t = STATS_max
    stats runs every ::i-1::i-1 using 'pp' nooutput
    p = STATS_max
    stats runs every ::i-1::i-1 using 'dp' nooutput
    name[i] = is_timed == 1 ? layout(t, p, STATS_max) : ''
}
set logscale xy
set xrange [low / 2 : high * 2]
set yrange [low / 2 : high * 2]
set size ratio -1
set xlabel 'predicted step (ms)'
set ylabel 'measured step (ms)'
set key outside right top Left reverse spacing 1.4
colours = '#4477aa #ee6677 #228833 #aa3377 #000000'
plot x with lines dt 2 lc rgb '#000000' title '$y = x$', \
     for [i = 1:rows] runs every ::i-1::i-1 \
         using (timed(column('predicted_step_s'))):\
               (timed(column('measured_step_s'))) \
         with points pt (5 + 2 * ((i - 1) % 4)) ps 1.2 \
         lc rgb word(colours, 1 + (i - 1) % 5) title name[i]
