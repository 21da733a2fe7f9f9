"""Published measurements from real clusters beside fabricsim's number on the closest setup
(docs/validation.md). Each measurement carries its source and how it was read; fabricsim's
side is run here, never fitted: the defaults stay what their own sources say.

    python3 tools/validation.py        # prints docs/validation.md's table

The measurements:

- NCCL ring allreduce on an HGX H100 (4 and 8 GPUs on the NVSwitch, NVLink 4, 900 GB/s "each
  GPU ... bidirectional"), from ASTRA-sim's hardware validation page ("Validation on GPU
  Systems - NCCL over HGX-H100 Systems", astra-sim-docs, figures "HGX-H100: 4 GPUs" and
  "HGX-H100: 8 GPUs", curve "Hardware"; NCCL forced to its ring). The figures' y axes are
  linear, so only the largest sizes can be read: each value is the middle of the curve's line
  at the size's tick, read from the figure's pixels (19-25 us a pixel; the line is 3-8 pixels
  thick where it is steep: about +-2 %). The 8-GPU 2 GiB point is the page's own text instead:
  "the maximum achieved BW is 741.34 GB/s (bidirectional)", i.e. a bus bandwidth of 370.67 GB/s
  each way, 2 GiB x 2 x 7/8 / 370.67 GB/s = 10.139 ms.
"""

from __future__ import annotations

import fabricsim

GIB = 1 << 30
MIB = 1 << 20

#: (GPUs, size in bytes, measured time in us, how it was read).
HGX_H100_RING: list[tuple[int, int, float, str]] = [
    (4, 128 * MIB, 611.0, "figure"),
    (4, 256 * MIB, 1126.0, "figure"),
    (4, 512 * MIB, 2214.0, "figure"),
    (4, 1 * GIB, 4408.0, "figure"),
    (4, 2 * GIB, 8664.0, "figure"),
    (8, 128 * MIB, 688.0, "figure"),
    (8, 256 * MIB, 1326.0, "figure"),
    (8, 512 * MIB, 2579.0, "figure"),
    (8, 1 * GIB, 5059.0, "figure"),
    (8, 2 * GIB, 2 * GIB * 2 * 7 / 8 / 370.67e9 * 1e6, "text: 741.34 GB/s bidirectional"),
]

#: NVLink 4 on H100: 900 GB/s counting both directions, 450 GB/s each way
#: (docs/scenario.md, `topology.scale_up_rate`).
H100_NVLINK = "3600Gbps"


def ring_on_one_server(gpus: int, size: int, costs: bool) -> float:
    """fabricsim's ring allreduce of ``size`` bytes a rank on one server of ``gpus`` GPUs
    joined by a 450 GB/s scale-up switch (300 ns, the default); with ``costs``, NCCL's
    latencies and the protocol its tuner picks for the ring. The time nccl-tests prints, us."""
    job: dict[str, object] = {"collective": "allreduce", "algorithm": "ring", "size": f"{size}B", "ranks": gpus}
    job |= {"costs": "nccl", "protocol": "auto"} if costs else {"costs": "none", "protocol": "simple"}
    topology = {"hosts": gpus, "radix": 8, "nics_per_server": gpus, "scale_up_rate": H100_NVLINK}
    r = fabricsim.run({"seed": 1, "topology": topology, "jobs": [job], "stop": {"max_time": "10s"}})
    assert r.complete, r.summary["stop_reason"]
    return float(r.jobs["jct_ps"][0]) / 1e6


def busbw(gpus: int, size: int, us: float) -> float:
    """nccl-tests' bus bandwidth of an allreduce, GB/s each way."""
    return size / (us * 1e3) * 2 * (gpus - 1) / gpus


def _size(v: int) -> str:
    return f"{v // GIB} GiB" if v >= GIB else f"{v // MIB} MiB"


def rows() -> list[str]:
    """docs/validation.md's HGX H100 table, one row a measurement."""
    out = [
        "| GPUs | size | measured ms | busbw GB/s | fabricsim ms | busbw GB/s | fabricsim / measured | with NCCL's costs: ms | read from |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for gpus, size, measured, how in HGX_H100_RING:
        plain = ring_on_one_server(gpus, size, costs=False)
        nccl = ring_on_one_server(gpus, size, costs=True)
        out.append(
            f"| {gpus} | {_size(size)} | {measured / 1e3:.3f} | {busbw(gpus, size, measured):.1f} | {plain / 1e3:.3f} | "
            f"{busbw(gpus, size, plain):.1f} | {plain / measured:.3f} | {nccl / 1e3:.3f} | {how} |"
        )
    return out


def main() -> None:
    print("\n".join(rows()))


if __name__ == "__main__":
    main()
