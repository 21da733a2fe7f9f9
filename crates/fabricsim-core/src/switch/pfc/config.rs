//! `[switch.pfc]`: the thresholds of priority flow control, checked against the fabric.

use serde::{Deserialize, Serialize};

use crate::error::{ensure, ScenarioError};
use crate::units::{AutoOr, SizeOrBdp};

/// `[switch.pfc]`, read with `switch.overflow = "pfc"` (IEEE 802.1Qbb priority flow control).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PfcConfig {
    /// Bytes of one data class that came in through one port and wait at the switch, past which the switch sends that
    /// port's sender a PAUSE for the class. `"auto"`: with a per-port `buffer`, the buffer less the link's `headroom` (an
    /// ingress never holds more than a port's buffer); with a shared buffer, `alpha` times the pool's free space (dynamic
    /// thresholds, as the ns-3 RDMA simulators' switch does).
    #[serde(default)]
    #[schemars(extend("x-type" = "`\"auto\"`, size or BDP fraction"))]
    pub xoff: AutoOr<SizeOrBdp>,
    /// At or below this many bytes held the switch sends RESUME. `"auto"`: two full packets below `xoff`.
    #[serde(default)]
    #[schemars(extend("x-type" = "`\"auto\"`, size or BDP fraction"))]
    pub xon: AutoOr<SizeOrBdp>,
    /// Bytes an ingress may still take once past `xoff`: what is on its way while the PAUSE reaches the sender and the
    /// sender stops. `"auto"`: the link's, its data rate over the PAUSE's wait behind the packet the port back is
    /// sending and its own time, the delays both ways (propagation, and each far end's switch latency), plus the
    /// packet the sender is sending. A data packet that finds its ingress past `xoff + headroom` is dropped and counted
    /// (the headroom was too small: a lossless fabric should show none).
    #[serde(default)]
    #[schemars(extend("x-type" = "`\"auto\"`, size or BDP fraction"))]
    pub headroom: AutoOr<SizeOrBdp>,
}

/// Bytes a PFC frame takes on the wire (a minimum Ethernet frame).
pub const FRAME: u64 = 64;

/// `[switch.pfc]` in bytes: `None` where a value follows from the link (headroom) or the
/// buffer's state (a shared buffer's dynamic `xoff`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcModel {
    pub xoff: Option<u64>,
    pub xon: Option<u64>,
    pub headroom: Option<u64>,
    pub mtu: u64,
}

impl PfcModel {
    /// The headroom of the link whose sender is paused: data comes at `rate` b/s over a wire
    /// of `delay` ps, and the PAUSE goes back at `back_rate` over `back_delay`.
    pub fn headroom_of(&self, (rate, delay): (u64, u64), (back_rate, back_delay): (u64, u64)) -> u64 {
        self.headroom.unwrap_or_else(|| auto_headroom(self.mtu, (rate, delay), (back_rate, back_delay)))
    }

    /// The RESUME threshold under `xoff`.
    pub fn xon_under(&self, xoff: u64) -> u64 {
        self.xon.unwrap_or(xoff.saturating_sub(2 * self.mtu))
    }
}

/// What reaches a switch on a link after it decides to pause the link's sender, at most: the
/// PAUSE waits for the packet the port back is sending and takes its own time, crosses the
/// link back, the sender finishes the packet it is sending, and what it sent before is still on
/// the wire; all the while data comes at the link's `rate` (the standard sizing, both
/// directions' delays and the rates apart).
pub fn auto_headroom(mtu: u64, (rate, delay): (u64, u64), (back_rate, back_delay): (u64, u64)) -> u64 {
    let ps = u128::from(crate::time::PS_PER_S);
    let bytes_in = |t: u128| (u128::from(rate) * t).div_ceil(8 * ps) as u64;
    let back = crate::time::serialization(mtu + FRAME, back_rate);
    bytes_in(u128::from(back) + u128::from(back_delay) + u128::from(delay)) + mtu
}

impl PfcConfig {
    /// Checks the thresholds: `buffer` is what a queue holds with a per-port buffer (`None`
    /// with a shared one); `headroom` the largest link's automatic headroom.
    pub fn resolve(&self, buffer: Option<u64>, headroom: u64, bdp_packets: u64, mtu: u64) -> Result<PfcModel, ScenarioError> {
        let bytes = |x: AutoOr<SizeOrBdp>| match x {
            AutoOr::Auto => None,
            AutoOr::Value(v) => Some(v.resolve(bdp_packets, mtu)),
        };
        let model = PfcModel { xoff: bytes(self.xoff), xon: bytes(self.xon), headroom: bytes(self.headroom), mtu };
        let room = model.headroom.unwrap_or(headroom);
        if let Some(h) = model.headroom {
            ensure(h >= 2 * mtu, "switch.pfc.headroom", format!("{h} B"), format!("allowed: at least two full packets ({} B)", 2 * mtu))?;
        }
        match (model.xoff, buffer) {
            (Some(x), _) => ensure(x >= 2 * mtu, "switch.pfc.xoff", format!("{x} B"), format!("allowed: at least two full packets ({} B)", 2 * mtu))?,
            (None, Some(b)) => ensure(
                b >= room + 2 * mtu,
                "switch.buffer",
                format!("{b} B"),
                format!(
                    "allowed: with overflow = \"pfc\" and pfc.xoff = \"auto\", at least the headroom of the longest link ({room} B) and two full packets ({} B): xoff is the buffer less the headroom",
                    2 * mtu
                ),
            )?,
            (None, None) => {}
        }
        if let (Some(on), Some(off)) = (model.xon, model.xoff) {
            ensure(on < off, "switch.pfc.xon", format!("{on} B"), format!("allowed: below xoff ({off} B)"))?;
        }
        Ok(model)
    }
}

/// `[switch.pfc]` resolved: `None` unless `overflow = "pfc"`, refused where given without it;
/// `buffer` is what a queue holds, `shared` whether the buffer is a pool.
pub fn resolve(
    cfg: &super::super::SwitchConfig,
    ctx: &super::super::SwitchContext<'_>,
    buffer: u64,
    shared: bool,
) -> Result<Option<PfcModel>, ScenarioError> {
    if cfg.overflow != super::super::Overflow::Pfc {
        return match cfg.pfc {
            Some(_) => Err(ScenarioError::new("switch.pfc", "a table", "allowed: only with switch.overflow = \"pfc\"")),
            None => Ok(None),
        };
    }
    let headroom = ctx.pfc_headroom;
    cfg.pfc.clone().unwrap_or_default().resolve((!shared).then_some(buffer), headroom, ctx.bdp_packets, ctx.mtu).map(Some)
}
