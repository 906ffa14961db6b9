set terminal pngcairo size 1200,1300 font ",10"
set output "chart.png"
set termoption noenhanced
set datafile missing "NaN"
set multiplot layout 3,1 title "redis-server: kernel, base build and lstack (median of rounds)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 scale 0
set grid ytics
set key top right
set title "throughput (req/s, log scale)"
set logscale y
set ylabel "req/s"
plot "chart.dat" using 2:xtic(1) title "kernel" lc rgb "#7f7f7f", \
     "" using 7 title "base" lc rgb "#bcbd22", \
     "" using 3 title "lstack" lc rgb "#1f77b4"
set title "lstack (and base) / kernel, log scale (req/s: higher is better; p50, p99 latency: lower is better)"
set ylabel "ratio"
plot "chart.dat" using 4:xtic(1) title "req/s" lc rgb "#2ca02c", \
     "" using 5 title "p50" lc rgb "#ff7f0e", \
     "" using 6 title "p99" lc rgb "#d62728", \
     "" using 8 title "base req/s" lc rgb "#bcbd22", \
     1 notitle with lines lc rgb "black" dt 2
set title "lstack / base, log scale (req/s: higher is better; p50, p99 latency: lower is better)"
plot "chart.dat" using 9:xtic(1) title "req/s" lc rgb "#2ca02c", \
     "" using 10 title "p50" lc rgb "#ff7f0e", \
     "" using 11 title "p99" lc rgb "#d62728", \
     1 notitle with lines lc rgb "black" dt 2
unset multiplot
