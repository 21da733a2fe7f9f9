//! `trace`: datacenter traffic at a load, as the ARCANE evaluation (sec. 4.2, WebSearch and
//! Facebook Hadoop at 40-100 % load), HPCC and DCTCP generate it.
//!
//! Every host starts messages as a Poisson process; sizes are drawn from a flow-size CDF
//! (linear interpolation between its points) and destinations uniformly among the other
//! hosts, all from the workload's seeded stream. The arrival rate per host is
//! `load x host link rate / (8 x mean size)`, so the offered load is `load` of every host
//! link's capacity over `duration`. `cdf` names a shipped distribution (`websearch`: DCTCP,
//! SIGCOMM 2010; `fb_hadoop`: Roy et al., SIGCOMM 2015) or a file of `size_bytes cumulative_%`
//! lines that the Python front end reads into `points`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Hosts, MessageSpec, Workload};
use crate::engine::rng::Rng;
use crate::error::{ensure, ScenarioError};
use crate::registry::AlgorithmInfo;
use crate::time::{Time, PS_PER_S};
use crate::units::Duration;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    category: "workload",
    name: "trace",
    summary: "Poisson arrivals per host at a load, sizes from the WebSearch / FB Hadoop CDF (or a file), random destinations",
    reference: "ARCANE sec. 4.2; DCTCP; Roy et al. 2015",
};

const WEBSEARCH: &str = include_str!("../../data/websearch_cdf.txt");
const FB_HADOOP: &str = include_str!("../../data/fb_hadoop_cdf.txt");

/// Most messages a trace may make (a shorter `duration` or a lower `load` make fewer).
pub const MAX_MESSAGES: f64 = 20_000_000.0;

/// `[workload]` parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The flow-size CDF: `"websearch"` (DCTCP, SIGCOMM 2010), `"fb_hadoop"` (Roy et al., SIGCOMM 2015), both
    /// shipped, or a file of `size_bytes cumulative_percent` lines, relative to the scenario file.
    #[schemars(example = crate::registry::example("\"websearch\""))]
    pub cdf: String,
    /// Written by the front end from a `cdf` file: its (size in bytes, cumulative percent) pairs; a scenario need
    /// not give it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<(f64, f64)>,
    /// A fraction in (0, 1] of every host link's capacity: every host starts messages as a Poisson process at
    /// `load x host link rate / (8 x mean size)`, to destinations uniform among the other hosts.
    #[schemars(example = crate::registry::example("0.5"))]
    pub load: f64,
    /// Arrivals fall in [start, start + duration); at most 20 000 000 messages.
    #[schemars(example = crate::registry::example("\"10us\""))]
    pub duration: Duration,
    /// When the messages start (a trace: when arrivals begin).
    #[serde(default)]
    pub start: Duration,
    /// The messages' data class, below `switch.classes`.
    #[serde(default)]
    pub class: u8,
}

/// Parses `size cumulative_percent` lines (blank lines and `#` comments skipped).
pub fn parse_cdf(text: &str) -> Result<Vec<(f64, f64)>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let v: Vec<f64> = line.split_whitespace().map(str::parse).collect::<Result<_, _>>().map_err(|_| format!("line {}: {line:?} is not two numbers", n + 1))?;
        if v.len() != 2 {
            return Err(format!("line {}: {line:?} is not two numbers", n + 1));
        }
        out.push((v[0], v[1]));
    }
    Ok(out)
}

/// A checked CDF: sizes and percentages non-decreasing, ending at 100 %.
#[derive(Debug)]
struct Cdf(Vec<(f64, f64)>);

impl Cdf {
    fn new(points: Vec<(f64, f64)>) -> Result<Cdf, String> {
        if points.len() < 2 {
            return Err("a CDF needs at least 2 points".into());
        }
        for w in points.windows(2) {
            if !(w[1].0 >= w[0].0 && w[1].1 >= w[0].1) {
                return Err(format!("points must not decrease: {:?} then {:?}", w[0], w[1]));
            }
        }
        let (first, last) = (points[0], points[points.len() - 1]);
        if !(first.0 >= 0.0 && first.1 >= 0.0 && (last.1 - 100.0).abs() < 1e-9 && last.0 >= 1.0 && last.0 <= (1u64 << 40) as f64) {
            return Err("sizes from 0 to at most 1 TiB, percentages from 0 ending at 100".into());
        }
        Ok(Cdf(points))
    }

    /// Mean size, bytes (uniform within each segment, as the interpolation draws).
    fn mean(&self) -> f64 {
        let p = &self.0;
        let below = p[0].1 / 100.0 * p[0].0;
        below + p.windows(2).map(|w| (w[1].1 - w[0].1) / 100.0 * (w[0].0 + w[1].0) / 2.0).sum::<f64>()
    }

    /// The size at cumulative percent `u` (0 to 100), interpolated; at least 1 byte.
    fn size(&self, u: f64) -> u64 {
        let p = &self.0;
        let i = p.partition_point(|&(_, c)| c < u).min(p.len() - 1);
        let s = if i == 0 || p[i].1 <= p[i - 1].1 {
            p[i].0
        } else {
            let (a, b) = (p[i - 1], p[i]);
            a.0 + (u - a.1) / (b.1 - a.1) * (b.0 - a.0)
        };
        (s.round() as u64).max(1)
    }
}

impl Config {
    fn cdf(&self) -> Result<Cdf, ScenarioError> {
        let err = |m: String| ScenarioError { field: "workload.cdf".into(), message: format!("got {:?}: {m}", self.cdf) };
        let points = match self.cdf.as_str() {
            "websearch" => parse_cdf(WEBSEARCH).map_err(err)?,
            "fb_hadoop" => parse_cdf(FB_HADOOP).map_err(err)?,
            _ if !self.points.is_empty() => self.points.clone(),
            _ => return Err(err("allowed: websearch, fb_hadoop, or a file of \"size_bytes cumulative_percent\" lines (read by the Python front end)".into())),
        };
        Cdf::new(points).map_err(err)
    }
}

impl Config {
    /// The load `messages` (this trace's) offer: their bits over every host link's capacity
    /// during `duration`.
    pub fn offered_load(&self, messages: &[MessageSpec], at: &Hosts) -> f64 {
        self.window(messages, at).offered
    }

    /// The trace's window, `start` to `start + duration`, and the load its messages offer in it.
    pub fn window(&self, messages: &[MessageSpec], at: &Hosts) -> LoadWindow {
        self.window_of(messages.iter().map(|m| m.bytes).sum(), messages.len() as u64, at)
    }

    /// [`Config::window`] of `count` messages of `bytes` in all.
    pub fn window_of(&self, bytes: u64, count: u64, at: &Hosts) -> LoadWindow {
        let capacity_bits = at.count as f64 * at.rate as f64 * self.duration.0 as f64 / PS_PER_S as f64;
        let start = self.start.0;
        LoadWindow {
            offered: bytes as f64 * 8.0 / capacity_bits,
            half: start.saturating_add(self.duration.0 / 2),
            end: start.saturating_add(self.duration.0),
            messages: count as u32,
            capacity_bits: capacity_bits * (self.duration.0 - self.duration.0 / 2) as f64 / self.duration.0 as f64,
        }
    }
}

/// A trace's window and what the results say of its load. Offered: its messages' bytes over
/// every host link's capacity during the window. Achieved: the payload its messages delivered
/// in the window's second half over the capacity in that half. The first half is left out as
/// warm-up: the trace starts on an empty fabric, and its large messages (30 MB in WebSearch,
/// 600 us alone on a 400 Gb/s link) take that long before what is delivered keeps pace with
/// what arrives. A fabric that keeps up delivers what is offered; one that falls behind builds
/// a backlog and delivers less.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoadWindow {
    pub offered: f64,
    /// When the window's second half starts and when the window ends (ps).
    pub half: Time,
    pub end: Time,
    /// The trace's messages are the first this many of the run.
    pub messages: u32,
    /// Bits every host link together can carry in the window's second half.
    pub capacity_bits: f64,
}

impl LoadWindow {
    /// The load `bytes` delivered in the window's second half make.
    pub fn load(&self, bytes: u64) -> f64 {
        bytes as f64 * 8.0 / self.capacity_bits
    }
}

impl Config {
    /// The trace's arrivals on the hosts `at`, one at a time in the order a run takes them
    /// ([`Arrivals`]), drawn from `rng` (the workload's stream).
    pub fn arrivals(&self, at: &Hosts, rng: &mut Rng) -> Result<Arrivals, ScenarioError> {
        let cdf = self.cdf()?;
        ensure(self.load > 0.0 && self.load <= 1.0, "workload.load", self.load, "allowed: a fraction in (0, 1]")?;
        ensure(self.duration.0 > 0, "workload.duration", self.duration, "allowed: a positive duration")?;
        // arrivals per host per picosecond
        let rate = self.load * at.rate as f64 / (8.0 * cdf.mean()) / PS_PER_S as f64;
        let expected = rate * self.duration.0 as f64 * at.count as f64;
        ensure(
            expected <= MAX_MESSAGES,
            "workload.duration",
            format!("{} ({expected:.0} messages expected at load {})", self.duration, self.load),
            format!("allowed: at most {MAX_MESSAGES:.0} messages (a shorter duration, a lower load, or fewer hosts)"),
        )?;
        let draw = Draw { cdf: Arc::new(cdf), rate, duration: self.duration.0 as f64, start: self.start.0, class: self.class, hosts: at.count };
        // every host's arrivals drawn in turn from the one stream, as they always were; each
        // host keeps where its draws began, to draw them again as the run reads them
        let mut hosts = Vec::with_capacity(at.count as usize);
        let (mut count, mut bytes) = (0u64, 0u64);
        for src in 0..at.count {
            let mut host = Host { rng: rng.clone(), t: 0.0, src };
            hosts.push(host.clone());
            while let Some(m) = draw.next(&mut host) {
                count += 1;
                bytes += m.bytes;
            }
            *rng = host.rng;
        }
        let mut next = BinaryHeap::with_capacity(hosts.len());
        let mut held = Vec::with_capacity(hosts.len());
        for mut host in hosts {
            if let Some(m) = draw.next(&mut host) {
                next.push(Reverse((m.start, host.src)));
                held.push((host, Some(m)));
            } else {
                held.push((host, None));
            }
        }
        Ok(Arrivals { draw, hosts: held, next, count, bytes, taken: 0 })
    }
}

/// What draws a host's next arrival.
#[derive(Debug, Clone)]
struct Draw {
    cdf: Arc<Cdf>,
    /// Arrivals per host per picosecond, and the window's length and start (ps).
    rate: f64,
    duration: f64,
    start: Time,
    class: u8,
    hosts: u32,
}

/// A host's arrivals as they are drawn: its stream and the time of its last arrival (from the
/// window's start, ps, as the draws add it up).
#[derive(Debug, Clone)]
struct Host {
    rng: Rng,
    t: f64,
    src: u32,
}

impl Draw {
    /// `host`'s next arrival, `None` past the window: its time, its size from the CDF and a
    /// destination uniform among the other hosts, in that order from its stream.
    fn next(&self, host: &mut Host) -> Option<MessageSpec> {
        host.t += -(1.0 - host.rng.unit()).ln() / self.rate;
        if host.t >= self.duration {
            return None;
        }
        let bytes = self.cdf.size(host.rng.unit() * 100.0);
        let mut dst = host.rng.below(u64::from(self.hosts) - 1) as u32;
        if dst >= host.src {
            dst += 1;
        }
        Some(MessageSpec::new(host.src, dst, bytes, self.start + host.t as u64, self.class))
    }
}

/// A trace's messages one at a time, in the order a run takes them: by start, then source
/// host, a host's own in the order it drew them (what sorting them all by start and source
/// gives, stably). Each host's arrivals are drawn again from where its draws began in the
/// workload's stream, so this holds a stream's state and the next arrival for each host, not
/// every message: a run draws a trace's messages as its clock reaches them
/// (`sim::generate`), with the same ids and the same draws as had they all been made first.
#[derive(Debug, Clone)]
pub struct Arrivals {
    draw: Draw,
    /// Each host's stream and its next arrival, ...
    hosts: Vec<(Host, Option<MessageSpec>)>,
    /// ... and the next arrivals' (start, source), earliest first.
    next: BinaryHeap<Reverse<(Time, u32)>>,
    /// How many messages the trace makes, all told, and their bytes ...
    pub count: u64,
    pub bytes: u64,
    /// ... and how many were taken.
    taken: u64,
}

impl Arrivals {
    /// When the next message starts (`None`: the trace has made them all).
    pub fn peek(&self) -> Option<Time> {
        self.next.peek().map(|Reverse((t, _))| *t)
    }

    /// Calls `f` with each message not yet taken, drawn again one host's after another (not
    /// in the run's order: for what counts them), leaving these arrivals as they are.
    pub fn each(&self, mut f: impl FnMut(&MessageSpec)) {
        for (host, held) in &self.hosts {
            let Some(first) = held else { continue };
            f(first);
            let mut host = host.clone();
            while let Some(m) = self.draw.next(&mut host) {
                f(&m);
            }
        }
    }

    /// How many messages are left to take.
    pub fn left(&self) -> u64 {
        self.count - self.taken
    }

    /// The class of its messages (`None` when it makes none).
    pub fn class(&self) -> Option<u8> {
        (self.count > 0).then_some(self.draw.class)
    }
}

impl Iterator for Arrivals {
    type Item = MessageSpec;

    fn next(&mut self) -> Option<MessageSpec> {
        let Reverse((_, src)) = self.next.pop()?;
        self.taken += 1;
        let (host, held) = &mut self.hosts[src as usize];
        let m = held.take();
        *held = self.draw.next(host);
        if let Some(n) = held {
            self.next.push(Reverse((n.start, src)));
        }
        m
    }
}

impl Workload for Config {
    fn messages(&self, at: &Hosts, rng: &mut Rng) -> Result<Vec<MessageSpec>, ScenarioError> {
        let arrivals = self.arrivals(at, rng)?;
        let mut out = Vec::with_capacity(arrivals.count as usize);
        out.extend(arrivals);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Stream;

    fn trace(cdf: &str, load: f64, duration_us: u64) -> Config {
        Config { cdf: cdf.into(), points: Vec::new(), load, duration: Duration(duration_us * 1_000_000), start: Duration(0), class: 0 }
    }

    #[test]
    fn the_offered_load_is_the_target() {
        for (cdf, load) in [("websearch", 0.6), ("fb_hadoop", 0.4)] {
            let hosts = Hosts::new(128);
            let t = trace(cdf, load, 2_000);
            let m = t.messages(&hosts, &mut Rng::stream(1, Stream::Workload, 0)).unwrap();
            let bits: f64 = m.iter().map(|x| x.bytes as f64 * 8.0).sum();
            let offered = bits / (128.0 * 400e9 * 2e-3);
            assert_eq!(t.offered_load(&m, &hosts), offered);
            assert!((offered / load - 1.0).abs() < 0.05, "{cdf}: offered {offered} for {load}");
            assert!(m.iter().all(|x| x.src != x.dst && x.dst < 128 && x.start < 2_000_000_000));
        }
    }

    /// Every host's arrivals drawn in turn from the one stream, then sorted by start and
    /// source: what a trace's messages were before they were drawn one at a time.
    fn drawn_then_sorted(t: &Config, at: &Hosts, rng: &mut Rng) -> Vec<MessageSpec> {
        let cdf = t.cdf().unwrap();
        let rate = t.load * at.rate as f64 / (8.0 * cdf.mean()) / PS_PER_S as f64;
        let mut out = Vec::new();
        for src in 0..at.count {
            let mut time = 0.0f64;
            loop {
                time += -(1.0 - rng.unit()).ln() / rate;
                if time >= t.duration.0 as f64 {
                    break;
                }
                let bytes = cdf.size(rng.unit() * 100.0);
                let mut dst = rng.below(at.count as u64 - 1) as u32;
                if dst >= src {
                    dst += 1;
                }
                out.push(MessageSpec::new(src, dst, bytes, t.start.0 + time as u64, t.class));
            }
        }
        out.sort_by_key(|m| (m.start, m.src));
        out
    }

    #[test]
    fn arrivals_one_at_a_time_are_the_messages_drawn_and_sorted() {
        for (cdf, load, hosts, us, seed) in [("websearch", 0.6, 64, 300, 1), ("fb_hadoop", 0.9, 16, 300, 7), ("websearch", 0.5, 3, 20_000, 2)] {
            let t = Config { start: Duration(5_000), ..trace(cdf, load, us) };
            let at = Hosts::new(hosts);
            let mut a = Rng::stream(seed, Stream::Workload, 0);
            let mut b = a.clone();
            let want = drawn_then_sorted(&t, &at, &mut a);
            let arrivals = t.arrivals(&at, &mut b).unwrap();
            assert_eq!(arrivals.count as usize, want.len());
            assert_eq!(arrivals.bytes, want.iter().map(|m| m.bytes).sum::<u64>());
            assert_eq!(arrivals.peek(), want.first().map(|m| m.start));
            assert_eq!(arrivals.left(), arrivals.count);
            let mut each = Vec::new();
            arrivals.each(|m| each.push(*m));
            each.sort_by_key(|m| (m.start, m.src));
            assert_eq!(each, want, "each: every message, in some order");
            let got: Vec<MessageSpec> = arrivals.collect();
            assert!(want.len() > 100, "{cdf}: {} messages", want.len());
            assert_eq!(got, want, "{cdf} on {hosts} hosts");
            assert_eq!(a.next_u64(), b.next_u64(), "the stream is left where the draws of every host leave it");
        }
    }

    #[test]
    fn sizes_follow_the_cdf() {
        let c = trace("websearch", 0.5, 1).cdf().unwrap();
        assert_eq!(c.size(0.0), 1);
        assert_eq!(c.size(15.0), 10_000);
        assert_eq!(c.size(17.5), 15_000, "halfway between (10 kB, 15 %) and (20 kB, 20 %)");
        assert_eq!(c.size(100.0), 30_000_000);
        assert!(trace("nope", 0.5, 1).cdf().is_err());
        assert!(Cdf::new(vec![(0.0, 0.0), (10.0, 50.0)]).is_err(), "must end at 100 %");
        assert!(parse_cdf("1 2 3").is_err());
    }
}
