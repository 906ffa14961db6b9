"""The gnuplot charts of a scripts/bench.sh run: chart.gp + chart.dat
(req/s and ratios) and chart-cpu.gp (server CPU per request); bench.sh runs
gnuplot on them when it is installed."""
import os

from runs import BASE

def write_cpu_chart(out, scen):
    """chart-cpu.dat + chart-cpu.gp: server CPU microseconds per request by
    scenario: the kernel's process, lstack's process, lstack's busy time."""
    rows = [(s, v["cpu_per_req"]) for s, v in scen.items() if "cpu_per_req" in v]
    if not rows or all(cp["kernel"]["us"] is None for _, cp in rows):
        return

    def num(x):
        return "NaN" if x is None else f"{x:.6g}"

    with open(os.path.join(out, "chart-cpu.dat"), "w") as f:
        f.write("# scenario kernel_us lstack_us lstack_busy_us lstack_busy_cpu_us\n")
        for s, cp in rows:
            f.write(f"\"{s}\" {num(cp['kernel']['us'])} {num(cp['lstack']['us'])} {num(cp['lstack']['busy_us'])}"
                    f" {num(cp['lstack']['busy_cpu_us'])}\n")
    gp = """\
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
plot "chart-cpu.dat" using 2:xtic(1) title "kernel: utime+stime" lc rgb "#7f7f7f", \\
     "" using 3 title "lstack: utime+stime (idle polling included)" lc rgb "#aec7e8", \\
     "" using 4 title "lstack: stack busy time (TSC)" lc rgb "#1f77b4", \\
     "" using 5 title "lstack: busy share of utime+stime" lc rgb "#17becf"
"""
    with open(os.path.join(out, "chart-cpu.gp"), "w") as f:
        f.write(gp)


def write_chart(out, scen, has_base=False):
    """chart.dat + chart.gp: req/s (log scale) and the lstack/kernel ratios.
    With base runs: base's req/s in the first panel, base/kernel req/s in
    the second, and a third panel of the lstack/base ratios (their columns
    come after the first six, which keep their place)."""
    rows = []
    for s, v in scen.items():
        for t, ts in v["tests"].items():
            row = (f"{s}:{t}", ts["kernel"]["rps"], ts["lstack"]["rps"],
                   ts["ratio"]["rps"], ts["ratio"]["p50"], ts["ratio"]["p99"])
            if has_base:
                lb = ts["ratio_lstack_base"]
                row += (ts[BASE]["rps"], ts["ratio_base_kernel"]["rps"], lb["rps"], lb["p50"], lb["p99"])
            rows.append(row)
    if not rows:
        return

    def num(x):
        return "NaN" if x is None else f"{x:.6g}"

    with open(os.path.join(out, "chart.dat"), "w") as f:
        f.write("# label kernel_rps lstack_rps rps_ratio p50_ratio p99_ratio"
                + (" base_rps base_kernel_rps_ratio lstack_base_rps_ratio lstack_base_p50_ratio"
                   " lstack_base_p99_ratio" if has_base else "") + "\n")
        for r in rows:
            f.write(f"\"{r[0]}\" " + " ".join(num(x) for x in r[1:]) + "\n")
    if has_base:
        size, panels, title = "1200,1300", "3,1", "kernel, base build and lstack"
        base_bar = '     "" using 7 title "base" lc rgb "#bcbd22", \\\n'
        base_ratio = '     "" using 8 title "base req/s" lc rgb "#bcbd22", \\\n'
        third = """\
set title "lstack / base, log scale (req/s: higher is better; p50, p99 latency: lower is better)"
plot "chart.dat" using 9:xtic(1) title "req/s" lc rgb "#2ca02c", \\
     "" using 10 title "p50" lc rgb "#ff7f0e", \\
     "" using 11 title "p99" lc rgb "#d62728", \\
     1 notitle with lines lc rgb "black" dt 2
"""
    else:
        size, panels, title = "1200,900", "2,1", "kernel vs lstack"
        base_bar = base_ratio = third = ""
    gp = f"""\
set terminal pngcairo size {size} font ",10"
set output "chart.png"
set termoption noenhanced
set datafile missing "NaN"
set multiplot layout {panels} title "redis-server: {title} (median of rounds)"
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
plot "chart.dat" using 2:xtic(1) title "kernel" lc rgb "#7f7f7f", \\
{base_bar}     "" using 3 title "lstack" lc rgb "#1f77b4"
set title "{'lstack (and base) / kernel' if has_base else 'lstack / kernel'}, log scale (req/s: higher is better; p50, p99 latency: lower is better)"
set ylabel "ratio"
plot "chart.dat" using 4:xtic(1) title "req/s" lc rgb "#2ca02c", \\
     "" using 5 title "p50" lc rgb "#ff7f0e", \\
     "" using 6 title "p99" lc rgb "#d62728", \\
{base_ratio}     1 notitle with lines lc rgb "black" dt 2
{third}unset multiplot
"""
    with open(os.path.join(out, "chart.gp"), "w") as f:
        f.write(gp)
