# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# NIC seconds / compute seconds of designs A and B against NIC bandwidth.
set datafile separator ','
set logscale x
set xlabel 'NIC bandwidth per GPU (Gbps)'
set ylabel 'NIC time / compute time'
set xtics (100, 200, 300, 400, 600, 800)
set xrange [90:880]
set yrange [0:*]
set grid xtics ytics
set key top right spacing 1.4 samplen 2
ratio = data.'/05-ratio.csv'
cross = data.'/05-cross.csv'
plot ratio using 'nic_gbps':'ratio_a' with linespoints pt 7 ps 0.6 lw 2 \
       lc rgb '#4477aa' title 'A: TP8 × FSDP128', \
     ratio using 'nic_gbps':'ratio_b' with linespoints pt 5 ps 0.6 lw 2 \
       lc rgb '#ee6677' title 'B: TP8 × PP8 × DP16', \
     cross using 'nic_gbps':'ratio_a' with points pt 6 ps 2.5 lw 2 \
       lc rgb '#228833' title 'equal step times', \
     cross using 'nic_gbps':'ratio_a':(sprintf('about %.0f Gbps', \
       10 * floor(column('nic_gbps') / 10 + 0.5))) with labels left \
       offset 1.5,0.8 notitle
