# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# The simulated timelines of two pipelines, one row per stage.
set datafile separator ','
set multiplot layout 2,1
set yrange [*:*] reverse
set ylabel 'stage'
set key off
set style fill solid 1.0 border lc rgb '#ffffff'
col(op) = op eq 'forward' ? 0x4477aa : 0xee6677
set title '8 stages, 16 micro-batches, 1F1B' offset 0,-0.6
set ytics 0,2,7 font ',7'
set xtics font ',7'
plot data.'/05-trace-8.csv' using ((column('start') + column('end'))/2):'stage':\
     ((column('end') - column('start'))/2):(0.42):(col(strcol('op'))) \
     with boxxyerror lc rgb variable
set title '16 stages, 32 micro-batches, interleaved, 2 chunks' offset 0,-0.6
set xlabel 'time (forward passes of one stage)'
set ytics 0,5,15 font ',7'
plot data.'/05-trace-16.csv' using ((column('start') + column('end'))/2):'stage':\
     ((column('end') - column('start'))/2):(0.42):(col(strcol('op'))) \
     with boxxyerror lc rgb variable
unset multiplot
