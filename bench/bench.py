#!/usr/bin/env python3
"""Parse and aggregate the runs of scripts/bench.sh (stdlib only).

    bench.py oneline RUNDIR        one line about one run (progress output)
    bench.py aggregate OUTDIR [--rounds N] [--scenarios 1,2] [--server-cpu N] [--client-cpu N]
                                   results.json, results.csv, runs.csv,
                                   summary.txt (also printed), chart.gp + chart.dat
    bench.py table RESULTS.json    print the table of an earlier run again
    bench.py noisy RUNDIR...       exit 1 if another process disturbed one of the runs
    bench.py perf RUNDIR           the server's and the client's perf samples by
                                   object group (a run made with --perf)
    bench.py summary RESULTS.json [--bed NAME]   medians and method line for docs/results/

What a run directory holds: runs.py; what each figure means: report.py.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_split import cmd_perf  # noqa: E402  (modules of this directory)
from report import aggregate, cmd_oneline, table  # noqa: E402
from runs import cmd_noisy  # noqa: E402
from summary import cmd_summary  # noqa: E402


def main(argv):
    if len(argv) >= 2 and argv[0] == "summary":
        return cmd_summary(argv[1:])
    if len(argv) >= 2 and argv[0] == "noisy":
        return cmd_noisy(argv[1:])
    if len(argv) >= 2 and argv[0] == "perf":
        return cmd_perf(argv[1])
    if len(argv) >= 2 and argv[0] == "oneline":
        cmd_oneline(argv[1])
        return 0
    if len(argv) >= 2 and argv[0] == "table":
        with open(argv[1]) as f:
            print(table(json.load(f)), end="")
        return 0
    if len(argv) >= 2 and argv[0] == "aggregate":
        out = argv[1]
        opts = {"--rounds": "0", "--scenarios": "1,2,3,4,5,6", "--server-cpu": "1", "--client-cpu": "0"}
        rest = argv[2:]
        while rest:
            if rest[0] in opts and len(rest) >= 2:
                opts[rest[0]] = rest[1]
                rest = rest[2:]
            else:
                print(f"bench.py: unknown argument {rest[0]}", file=sys.stderr)
                return 2
        scen_list = [int(x) for x in opts["--scenarios"].split(",") if x]
        return aggregate(out, int(opts["--rounds"]), scen_list,
                         int(opts["--server-cpu"]), int(opts["--client-cpu"]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
