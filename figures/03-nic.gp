# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# Communication over compute on the NIC against the NIC's rate, designs A, B.
set datafile separator ','
set logscale x 2
set logscale y
set xlabel 'NIC per GPU (Gbps, each way)'
set ylabel 'NIC seconds / compute seconds' offset -1.5,0
set lmargin 10
set xtics (100, 200, 400, 800, '1,600' 1600)   # grouped, as in the text
set ytics (0.01, 0.03, 0.1, 0.3, 1, 3)
set xrange [90:1800]
set yrange [0.0004:6]
set grid xtics ytics
set key bottom left reverse Left samplen 2 spacing 1.6 opaque
file = data.'/03-nic.csv'
plot file skip 1 using 1:2 with linespoints lw 2 pt 7 lc rgb '#4477aa' \
         title 'design A (FSDP)', \
     ''   skip 1 using 1:3 with lines dt 2 lw 1 lc rgb '#4477aa' \
         title 'A, bandwidth only', \
     ''   skip 1 using 1:4 with linespoints lw 2 pt 5 lc rgb '#ee6677' \
         title 'design B (PP)', \
     1 with lines lc rgb 'black' notitle
