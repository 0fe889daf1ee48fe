#!/usr/bin/env python3
"""Summary of a `sysyc bench --reference gcc --save FILE` JSON: scripts/bench_summary.py FILE [N]

For every metric both compilers have (executed instructions `insns`, and the estimated cycles
`cycles` / `cycles_mca` when the bench measured them), the ratio sysyc / gcc per case, then the
geomean, the total (sum over sum), median, worst, the distribution and the worst N (default 10).
Cases where sysyc did not pass (wrong output, crash, timeout) are listed first: with expected
outputs from the C compilers, each is a miscompile to reduce.
"""
import json
import math
import sys

METRICS = ["insns", "cycles", "cycles_mca"]
BUCKETS = [0.5, 0.8, 0.95, 1.05, 1.1, 1.25, 1.5, 2.0, 3.0]


def main():
    path = sys.argv[1]
    worst_n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with open(path) as f:
        doc = json.load(f)
    cases = doc.get("cases", [])
    bad = [c for c in cases if c["sysyc"].get("status") != "ok"]
    ref_bad = [c for c in cases if (c.get("reference") or {}).get("status") not in ("ok", None)]
    print(f"{len(cases)} programs, {len(cases) - len(bad)} pass with sysyc -O2")
    for c in bad:
        print(f"  FAIL {c['name']}: {c['sysyc'].get('status')}")
    for c in ref_bad:
        print(f"  reference failed {c['name']}: {c['reference'].get('status')}")
    names = list(METRICS)
    # Any further cycle-like metric a later bench writes.
    for c in cases:
        for k, v in c["sysyc"].items():
            if k.startswith("cycles") and k not in names and isinstance(v, (int, float)):
                names.append(k)
    for m in names:
        rows = []
        for c in cases:
            s, r = c["sysyc"], c.get("reference") or {}
            if s.get("status") != "ok" or r.get("status") != "ok":
                continue
            a, b = s.get(m), r.get(m)
            if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0 and a > 0:
                rows.append((a / b, c["name"], a, b))
        if not rows:
            continue
        ratios = sorted(x[0] for x in rows)
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        total = sum(x[2] for x in rows) / sum(x[3] for x in rows)
        med = ratios[len(ratios) // 2]
        print(f"\n== {m}: sysyc / gcc -O2 over {len(rows)} programs")
        print(f"geomean {geo:.3f}  total {total:.3f}  median {med:.3f}  "
              f"best {ratios[0]:.3f}  worst {ratios[-1]:.3f}")
        print(f"sysyc {sum(x[2] for x in rows):.4g}, gcc {sum(x[3] for x in rows):.4g} in all; "
              f"gcc per program {min(x[3] for x in rows):.3g}..{max(x[3] for x in rows):.3g}")
        edges = [0.0] + BUCKETS + [math.inf]
        dist = []
        for lo, hi in zip(edges, edges[1:]):
            n = sum(1 for x in ratios if lo <= x < hi)
            label = f"<{hi}" if lo == 0.0 else (f">={lo}" if hi == math.inf else f"{lo}-{hi}")
            dist.append(f"{label}: {n}")
        print("distribution: " + ", ".join(dist))
        print(f"above 1.1: {sum(1 for x in ratios if x > 1.1)}, "
              f"below 0.9: {sum(1 for x in ratios if x < 0.9)}")
        print(f"worst {worst_n}:")
        for ratio, name, a, b in sorted(rows, reverse=True)[:worst_n]:
            print(f"  {name:<28} {ratio:7.3f}  sysyc {a:>12}  gcc {b:>12}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
