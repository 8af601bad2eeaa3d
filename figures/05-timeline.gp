# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# The simulated timelines of four pipelines, one row per stage.
set terminal cairolatex pdf input size 12cm,12cm font ',9'
set datafile separator ','
set multiplot layout 4,1
set yrange [*:*] reverse
set ylabel 'stage'
set key off
set style fill solid 1.0 border lc rgb '#ffffff'
col(op) = op eq 'forward' ? 0x4477aa : op eq 'backward' ? 0xee6677 : 0x228833
box = '((column("start") + column("end"))/2):"stage":' \
    . '((column("end") - column("start"))/2):(0.42):(col(strcol("op")))'
stats data.'/05-trace-8.csv' using 'end' nooutput
set xrange [0:STATS_max]
set title '8 stages, 16 micro-batches, 1F1B' offset 0,-0.6
set ytics 0,2,7 font ',7'
set xtics font ',7'
plot data.'/05-trace-8.csv' using @box with boxxyerror lc rgb variable
set title '8 stages, 16 micro-batches, ZB-H1' offset 0,-0.6
plot data.'/05-trace-8-zb.csv' using @box with boxxyerror lc rgb variable
stats data.'/05-trace-16.csv' using 'end' nooutput
set xrange [0:STATS_max]
set title '16 stages, 32 micro-batches, interleaved, 2 chunks' offset 0,-0.6
set ytics 0,5,15 font ',7'
plot data.'/05-trace-16.csv' using @box with boxxyerror lc rgb variable
set title '16 stages, 32 micro-batches, ZB-H1' offset 0,-0.6
set xlabel 'time (forward passes of one stage)'
plot data.'/05-trace-16-zb.csv' using @box with boxxyerror lc rgb variable
unset multiplot
