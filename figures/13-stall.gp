# Tangled from chapters/99j-async-plumbing.nw; edit the chapter, not this file.
# The stall per checkpoint, synchronous against asynchronous: medians of
# the runs with their range.
set datafile separator ','
runs = data.'/13-stall.csv'
set xrange [0.4:2.6]
set yrange [0:*]
set ylabel 'training stalled per save (ms)'
set style fill solid 0.5 border -1
set boxwidth 0.5
unset key
plot runs using 'at':'stall_ms':xticlabels(2) with boxes lc rgb '#4477aa', \
     '' using 'at':'stall_ms':'lo_ms':'hi_ms' with yerrorbars pt 0 \
         lc rgb '#000000'
