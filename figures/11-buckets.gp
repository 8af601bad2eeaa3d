# Tangled from chapters/99c-buckets.nw; edit the chapter, not this file.
# Step time and the data axis's exposed time against the bucket size, one
# position per size; the blocking step and the compute alone as lines.
set datafile separator ','
runs = data.'/11-buckets.csv'
stats runs using 1 nooutput
set xrange [0.5:STATS_max + 0.5]
set yrange [0:*]
set xlabel 'bucket size (MiB)'
set ylabel 'ms per step'
set key tmargin center horizontal maxrows 2 reverse Left samplen 2 width 4
plot runs using 'at':'blocking_ms':xticlabels(2) with lines dt 2 \
         lc rgb '#000000' title 'step, blocking all-reduce', \
     '' using 'at':'compute_ms' with lines dt 3 lc rgb '#000000' \
         title 'step, compute alone', \
     '' using 'at':'step_ms':'step_lo':'step_hi' with yerrorlines pt 7 \
         lc rgb '#4477aa' title 'step, overlapped', \
     '' using 'at':'dp_ms':'dp_lo':'dp_hi' with yerrorlines pt 5 \
         lc rgb '#ee6677' title 'data axis, not hidden'
