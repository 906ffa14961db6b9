set terminal pngcairo size 1200,900 font ",10"
set output "chart.png"
set termoption noenhanced
set datafile missing "NaN"
set multiplot layout 2,1 title "redis-server: both ends on lstack (net_memif) vs the kernel (median of rounds)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 scale 0
set grid ytics
set key top right
set title "throughput (req/s, log scale)"
set logscale y
plot "chart.dat" using 2:xtic(1) title "kernel veth" lc rgb "#7f7f7f", \
     "" using 3 title "kernel lo" lc rgb "#bcbd22", \
     "" using 4 title "kernel unix" lc rgb "#ff7f0e", \
     "" using 5 title "lstack memif (both ends)" lc rgb "#1f77b4"
set title "lstack memif / kernel kind (req/s), log scale"
plot "chart.dat" using 6:xtic(1) title "/ veth" lc rgb "#7f7f7f", \
     "" using 7 title "/ lo" lc rgb "#bcbd22", \
     "" using 8 title "/ unix" lc rgb "#ff7f0e", \
     1 notitle with lines lc rgb "black" dt 2
unset multiplot
