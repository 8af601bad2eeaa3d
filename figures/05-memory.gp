# Tangled from chapters/91-planner-subcommands.nw; edit the chapter, not this file.
# Memory per GPU by kind for the candidate layouts, against the 80 GB card.
set datafile separator ','
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.6
set ylabel 'GB per GPU'
set yrange [0:100]
set key above horizontal maxrows 2 reverse Left samplen 1.5 spacing 1.4 width 3
set xtics scale 0
set grid ytics
m = data.'/05-memory.csv'
set arrow from graph 0, first 80 to graph 1, first 80 nohead lw 2 dt 2 \
    lc rgb '#000000'
# The layouts' names, broken after the first degree ("TP4" over "× PP8") so
# that six sit side by side.
cut(n) = strstrt(n, ' × ')
two(n) = cut(n) ? sprintf('\shortstack{%s\\%s}', n[1:cut(n) - 1], \
                          n[cut(n) + 1:*]) : n
name(x) = sprintf('{\footnotesize %s}', two(stringcolumn(1)))
plot m using (column('memory_state')/1e9):xtic(name(0)) title 'state' \
        lc rgb '#4477aa', \
     '' using (column('memory_activations')/1e9) title 'activations' \
        lc rgb '#ee6677', \
     '' using (column('memory_gathered')/1e9) title 'gathered' lc rgb '#228833', \
     '' using (column('memory_logits')/1e9) title 'logits' lc rgb '#ccbb44', \
     '' using ((column('memory_buffers') + column('memory_context'))/1e9) \
        title 'buffers, context' lc rgb '#66ccee', \
     '' using (column('memory_fragmentation')/1e9) title 'slack' lc rgb '#bbbbbb'
