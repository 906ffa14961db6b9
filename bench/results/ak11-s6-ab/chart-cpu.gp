set terminal pngcairo size 900,500 font ",10"
set output "chart-cpu.png"
set termoption noenhanced
set datafile missing "NaN"
set title "redis-server CPU per request (median of rounds; lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xlabel "scenario"
set ylabel "microseconds per request"
set yrange [0:*]
plot "chart-cpu.dat" using 2:xtic(1) title "kernel: utime+stime" lc rgb "#7f7f7f", \
     "" using 3 title "lstack: utime+stime (idle polling included)" lc rgb "#aec7e8", \
     "" using 4 title "lstack: stack busy time (TSC)" lc rgb "#1f77b4", \
     "" using 5 title "lstack: busy share of utime+stime" lc rgb "#17becf"
