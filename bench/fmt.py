"""Formatting and medians shared by bench.py and both_ends.py."""
import statistics

def fmt_rps(v):
    return "-" if v is None else f"{v:,.0f}"


def fmt_ms(v):
    return "-" if v is None else f"{v:.3f}"


def fmt_x(v):
    return "-" if v is None else f"{v:.2f}x"


def fmt_pct(v):
    return "-" if v is None else f"{v:.0f}%"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt_us(v):
    return "-" if v is None else f"{v:.2f}"
