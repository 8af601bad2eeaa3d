# Tangled from chapters/99f-measured-plumbing.nw; edit the chapter, not this file.
# Measured against predicted step, each timed layout a labelled point,
# with the line y = x.
set datafile separator ','
runs = data.'/11-mesh.csv'
timed(x) = column('timed') == 1 ? 1e3 * x : NaN
stats runs using (timed(column('predicted_step_s'))) nooutput
low = STATS_min; high = STATS_max
stats runs using (timed(column('measured_step_s'))) nooutput
low = STATS_min < low ? STATS_min : low
high = STATS_max > high ? STATS_max : high
set logscale xy
set xrange [low / 2 : high * 2]
set yrange [low / 2 : high * 2]
set size ratio -1
set xlabel 'predicted step (ms)'
set ylabel 'measured step (ms)'
set key top left
# A label's text is read for escapes, as a tic's is not: \\ for one \.
layout(t, p, d) = sprintf('$%d{\\times}%d{\\times}%d$', t, p, d)
plot x with lines dt 2 lc rgb '#000000' title '$y = x$', \
     runs using (timed(column('predicted_step_s'))):\
                (timed(column('measured_step_s'))) \
         with points pt 7 lc rgb '#4477aa' notitle, \
     runs using (timed(column('predicted_step_s'))):\
                (timed(column('measured_step_s'))):\
                (layout(column('tp'), column('pp'), column('dp'))) \
         with labels offset 0.6, 0.6 left notitle
