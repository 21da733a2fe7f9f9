"""Results of a run as polars DataFrames, with Parquet + JSON output."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import tomli_w

__all__ = ["Results"]


@dataclass
class Results:
    """What a run returns.

    Attributes
    ----------
    flows
        One row per flow: ``flow, src, dst, bytes, start_ps, first_send_ps, end_ps, fct_ps,
        ideal_fct_ps, slowdown, completed, delivered_bytes, packets, data_packets,
        retransmits, timeouts, trims, drops, ecn_acks, max_reorder, discarded, fast_nacks,
        goodput_gbps``. ``fct_ps``, ``end_ps``, ``slowdown`` and ``goodput_gbps`` are null for
        flows that did not complete.
    ports
        One row per egress port (one link direction): ``port, name, from, to, tier, up,
        rate_bps, bytes, packets, data_packets, max_queue_bytes, mean_queue_bytes, ecn_marks,
        trims, drops``.
    summary
        ``status`` ("complete" / "incomplete"), ``flows``, ``completed``, FCT and slowdown
        statistics over completed flows, packet counters, ``events``, ``wall_s``,
        ``peak_rss_mb`` and more (docs/scenario.md, "Outputs").
    accounting
        Every data packet sent, by fate: delivered, trimmed, dropped or in flight.
    reorder
        Reorder distances at the receivers, one row per (``flow``, ``distance``) with the
        number of ``arrivals``: how far an arrival trailed the highest PSN received before it
        (0 = in order; 63 collects 63 and more). ``r.reorder.group_by("distance")`` gives the
        overall distribution.
    samples
        With ``[samples]``: every ``samples.every``, one row per sampled port: ``time_ps``,
        ``port`` (join with ``ports`` for the name), ``queue_bytes`` (data queued) and
        ``utilization`` (bits sent in the interval over what the link could send). Empty
        otherwise.
    scenario
        The scenario as run, every default filled in.
    """

    flows: pl.DataFrame
    ports: pl.DataFrame
    summary: dict[str, Any]
    accounting: dict[str, int]
    scenario: dict[str, Any]
    reorder: pl.DataFrame | None = None
    samples: pl.DataFrame | None = None

    @classmethod
    def from_native(cls, raw: dict[str, Any], extra_summary: dict[str, Any]) -> Results:
        flows = pl.DataFrame(raw["flows"])
        done = pl.col("completed")
        flows = flows.with_columns(
            pl.when(done).then(pl.col(c)).otherwise(None).alias(c) for c in ("fct_ps", "end_ps", "slowdown", "goodput_gbps")
        )
        summary = json.loads(raw["summary"]) | extra_summary
        return cls(
            flows=flows,
            ports=pl.DataFrame(raw["ports"]),
            summary=summary,
            accounting=json.loads(raw["accounting"]),
            scenario=json.loads(raw["scenario"]),
            reorder=pl.DataFrame(raw["reorder"], schema={"flow": pl.UInt64, "distance": pl.UInt64, "arrivals": pl.UInt64}),
            samples=pl.DataFrame(
                raw["samples"], schema={"time_ps": pl.UInt64, "port": pl.UInt64, "queue_bytes": pl.UInt64, "utilization": pl.Float64}
            ),
        )

    @property
    def complete(self) -> bool:
        return bool(self.summary["status"] == "complete")

    def write(self, out_dir: str | Path) -> Path:
        """Write ``flows.parquet``, ``ports.parquet``, ``reorder.parquet``, ``summary.json`` and ``scenario.toml``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.flows.write_parquet(out / "flows.parquet")
        self.ports.write_parquet(out / "ports.parquet")
        if self.reorder is not None:
            self.reorder.write_parquet(out / "reorder.parquet")
        if self.samples is not None and self.samples.height:
            self.samples.write_parquet(out / "samples.parquet")
        (out / "summary.json").write_text(json.dumps({"summary": self.summary, "accounting": self.accounting}, indent=2) + "\n")
        (out / "scenario.toml").write_text(tomli_w.dumps(self.scenario))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "summary": self.summary}
