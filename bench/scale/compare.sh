#!/usr/bin/env bash
# compare.sh BASE_BUILD BUILD [RUNS] [bench_scale args...] - the scaling
# benchmark of two builds (an earlier commit's and this one's) in one run:
# each build's bench_scale runs RUNS times (default 3), the two in turn, so
# a drift of the machine favours neither; prints every line and, per
# build, the median of its runs' ratios (N stacks over 1 stack). Needs
# bench/scale/bench_scale built in both (ninja -C DIR bench/scale/bench_scale;
# an earlier commit needs its own bench/scale/scale_ctx.c: docs/performance.md).
set -u
[[ $# -ge 2 ]] || { sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 2; }
base=$1/bench/scale/bench_scale
this=$2/bench/scale/bench_scale
runs=${3:-3}
shift $(( $# >= 3 ? 3 : 2 ))
for b in "$base" "$this"; do [[ -x "$b" ]] || { echo "compare.sh: not built: $b" >&2; exit 2; }; done
declare -A ratios=()
for ((r = 1; r <= runs; r++)); do
    for side in base this; do
        bin=$base; [[ $side == this ]] && bin=$this
        echo "## $side run $r: $bin $*"
        out=$("$bin" "$@") || { echo "compare.sh: $bin failed" >&2; exit 1; }
        echo "$out"
        ratios[$side]+=" $(sed -n 's/^median:.* ratio \([0-9.]*\)$/\1/p' <<<"$out")"
    done
done
for side in base this; do
    # shellcheck disable=SC2086 # the list of ratios
    med=$(printf '%s\n' ${ratios[$side]} | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')
    echo "$side: ratios${ratios[$side]}; median $med"
done
