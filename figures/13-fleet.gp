# Tangled from chapters/99h-reliability-plumbing.nw; edit the chapter, not this file.
# The fleet's mean time between interruptions against its size, log-log:
# one line for each MTBF of a GPU (hours, from the header), and the point
# Llama 3's published count gives.
set datafile separator ','
set datafile columnheaders
lines = data.'/13-fleet.csv'
observed = data.'/13-fleet-observed.csv'
grouped(n) = n >= 1000 ? sprintf('%d{,}%03d', int(n / 1000), \
                                 int(n) % 1000) : sprintf('%d', int(n))
mtbf(name) = grouped(real(name[8:]))
set logscale xy
set autoscale xfix
set format x '$10^{%L}$'
set format y '$10^{%L}$'
set xlabel 'GPUs in the fleet, $n$'
set ylabel 'mean time between interruptions, $M$ (h)'
set key bottom left Left reverse samplen 2 spacing 1.3 opaque
set grid xtics ytics
colours = '#4477aa #ee6677 #228833'
plot for [i = 2:4] lines using 1:i with linespoints pt 7 ps 0.6 \
         lw 2 lc rgb word(colours, i - 1) \
         title 'a GPU fails every '.mtbf(columnhead(i)).' h', \
     observed using 1:2 with points pt 5 ps 1.3 \
         lc rgb '#000000' title 'Llama 3, observed'
