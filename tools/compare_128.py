"""The issue-3 calibration: every algorithm on the papers' 128-host permutation, 3 seeds.

    python3 tools/compare_128.py > docs/comparison.md

128 hosts, 2 tiers (16 leaves x 8 hosts, 8 spines), 400 Gb/s, 1 us links, no switch latency,
4160 B packets, 1-BDP queues, ECN 0.2/0.8 BDP, trimming, permutation of 8 MiB.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import fabricsim

ROOT = Path(__file__).resolve().parent.parent
SEEDS = (1, 2, 3)

# (label, lb kind, switch routing, reference peer's max / mean slowdown or None)
ROWS = [
    ("ecmp", "ecmp", "auto", (4.15, 1.86)),
    ("ops", "ops", "auto", (1.55, 1.11)),
    ("arcane / reps", "arcane", "auto", (1.38, 1.07)),
    ("bitmap", "bitmap", "auto", (1.15, 1.05)),
    ("switch adaptive (ecmp hosts)", "ecmp", "adaptive", (1.05, 1.03)),
    ("switch spray (ecmp hosts)", "ecmp", "spray", None),
    ("prime", "prime", "auto", None),
    ("co_prime", "co_prime", "auto", None),
    ("round_robin", "round_robin", "auto", None),
    ("mprdma", "mprdma", "auto", None),
    ("mptcp (8 subflows)", "mptcp", "auto", None),
    ("flowlet", "flowlet", "auto", None),
    ("plb", "plb", "auto", None),
]


def table(base, rows, seeds, evs_size=None) -> str:
    lines = [
        "| algorithm | max slowdown (mean over seeds) | range | mean slowdown | max queue KB | trims | reference max / mean |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, kind, routing, ref in rows:
        s = base.with_lb(kind).set("switch.routing", routing)
        if evs_size is not None and "evs_size" in s.filled()["lb"]:
            s = s.set("lb.evs_size", evs_size)
        runs = [fabricsim.run(s.set("seed", seed)).summary for seed in seeds]
        assert all(r["status"] == "complete" for r in runs), label
        mx = [r["max_slowdown"] for r in runs]
        mean = statistics.mean(r["mean_slowdown"] for r in runs)
        q = max(r["max_queue_bytes"] for r in runs) / 1e3
        trims = round(statistics.mean(r["trims"] for r in runs))
        ref_text = f"{ref[0]:.2f} / {ref[1]:.2f}" if ref else ""
        lines.append(f"| {label} | {statistics.mean(mx):.3f} | {min(mx):.3f}-{max(mx):.3f} | {mean:.3f} | {q:.1f} | {trims} | {ref_text} |")
    return "\n".join(lines) + "\n"


EXPLANATION = """
## Reading the tables against the reference

The reference is the UEC htsim peer on the same fabric, with its own NSCC window control,
64 EVs and 5 seeds. Our second table uses 64 EVs and 5 seeds too; the congestion control
stays ours (the per-ACK DCTCP of the ARCANE paper, window capped at the line-rate window).

- **ECMP** matches (4.1-4.5 vs 4.15): the tail is set by how many flows hash onto one uplink,
  not by the transport.
- **OPS: the EVS size explains the gap.** With 65536 EVs, random spraying puts almost exactly
  1/8 of every flow on each uplink and OPS reaches 1.13. With 64 EVs hashed onto 8 uplinks
  some uplinks own many more EVs than others (8 +- 2.6 each), a persistent imbalance, and OPS
  rises to the reference's value (1.53 vs 1.55). This is the hash non-uniformity of PRIME
  sec. III-A. Raising the window cap (we tried `max_cwnd` = 1.5 and 2 BDP) does not worsen OPS
  (1.12), so our window control is not what keeps it low.
- **ARCANE/REPS** beats OPS in both, as in the paper: it reuses the EVs that came back
  unmarked and so drifts away from the over-subscribed uplinks. Ours is better than the
  reference's 1.38 in both tables. We have not isolated why; the remaining difference in setup
  is the window control (NSCC vs per-ACK DCTCP), the obvious candidate.
- **Bitmap** is close with 65536 EVs (1.13 vs 1.15) and worse with 64 EVs (1.28): skipping
  penalized EVs cannot fix an uplink that simply owns too many EVs, and its accumulated
  penalties (PRIME's critique) keep good EVs skipped for a while. The reference ranks bitmap
  above REPS; we rank ARCANE first. The order of these two depends on the window control,
  which differs.
- **Switch adaptive routing** is 1.13 here vs 1.05 in the reference. Ours chooses the
  least-loaded uplink packet by packet at the leaf; in this 2-tier tree that is the only
  choice, and it cannot see the spine-to-leaf downlink, where flows from different leaves
  meet (the limitation PRIME sec. I names; our max queue, 291 KB, sits on those downlinks).
  The reference's adaptive routing may weigh more than the instantaneous queue length; not
  verified.
- **PRIME / CO-PRIME / round robin** (no reference numbers) are the best on this healthy,
  symmetric fabric: every flow puts exactly 1/8 of its packets on each spine, so queues stay
  tiny (25-40 KB vs 190 KB for OPS), PRIME's claim of less buffer inflation. PRIME equals
  CO-PRIME because queues never reach Kmin: no congestion signal fires. A fixed round robin
  is best when the fabric is healthy; PRIME's shuffling and penalties pay off when it is not
  (asymmetry and failures: `scenarios/arcane_asymmetric.toml`, where PRIME reaches 1.34 and
  ARCANE 1.12 against OPS's 2.03).
- **Flowlet and PLB** stay near ECMP: a window-limited elephant flow has no idle gaps for
  flowlets, and PLB moves one whole flow at a time. **MPTCP** halves ECMP's tail by averaging
  8 hashed paths per message, but each subflow can still collide.
"""


def main() -> None:
    base = fabricsim.load(ROOT / "scenarios" / "permutation_128.toml")
    out = sys.stdout
    t0 = time.perf_counter()
    out.write(
        "# Load balancers on the 128-host permutation\n\n"
        "Produced by `python3 tools/compare_128.py > docs/comparison.md` (fabricsim "
        f"{fabricsim.__version__}). Scenario: `scenarios/permutation_128.toml`: 128 hosts, 2 tiers "
        "(16 leaves x 8 hosts, 8 spines), 400 Gb/s, 1 us links, no switch latency, 4160 B packets, "
        "1-BDP queues, ECN 0.2/0.8 BDP, trimming, DCTCP; a permutation of 8 MiB. Slowdown = FCT / "
        'ideal FCT; "max" is the worst flow of a run, averaged over seeds (range beside it); '
        '"mean" is the average flow.\n\n'
        f"## Default EVS (65536 EVs), seeds {', '.join(map(str, SEEDS))}\n\n"
    )
    out.write(table(base, ROWS, SEEDS))
    ev_rows = [r for r in ROWS if r[1] in ("ecmp", "ops", "arcane", "bitmap", "mprdma") and r[2] == "auto"]
    out.write("\n## 64 EVs, seeds 1-5 (the reference's setup)\n\n")
    out.write(table(base, ev_rows, (1, 2, 3, 4, 5), evs_size=64))
    out.write(EXPLANATION)
    out.write(f"\n({time.perf_counter() - t0:.0f} s for all runs on the project machine.)\n")


if __name__ == "__main__":
    main()
