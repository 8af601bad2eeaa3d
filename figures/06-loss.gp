# Tangled from chapters/94-trainer-plumbing.nw; edit the chapter, not this file.
# Training and validation loss against step, with the entropy references.
set datafile separator ','
set xlabel 'step'
set ylabel 'loss (nats per token)'
set key top right
set yrange [0:4.8]
# Grid lines at whole nats, thin and grey, so that neither entropy line
# (dashed and dotted, in colour) lies on one and looks like it.
set ytics 1
set grid ytics lw 0.5 lc rgb '#cccccc' dt 1
log = data.'/06-loss.csv'
plot log using 1:3 with lines lw 1 lc rgb '#4477aa' title 'training', \
     log using 1:($4 > 0 ? $4 : 1/0) with linespoints pt 7 ps 0.6 lw 2 \
         lc rgb '#ee6677' title 'validation', \
     log using 1:6 with lines dt 2 lw 2 lc rgb '#228833' \
         title 'unigram entropy', \
     log using 1:7 with lines dt 3 lw 2 lc rgb '#aa3377' title 'bigram entropy'
