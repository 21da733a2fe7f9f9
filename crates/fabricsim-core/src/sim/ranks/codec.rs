//! What crosses between processes, as bytes: the mail of one piece for another (packets for
//! its wires, release notices), and the few numbers the ranks agree on between windows.
//! Little-endian fixed-width fields, written and read in one order: a packet takes 47 bytes
//! (48 in memory).

use crate::engine::{Event, Notice};
use crate::packet::{Ext, Kind, Packet};
use crate::sim::piece::Mail;
use crate::time::Time;

/// Bytes a packet takes.
const PACKET: usize = 47;

/// Bytes being written.
#[derive(Default)]
pub(crate) struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u128(&mut self, v: u128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    pub fn packet(&mut self, p: &Packet) {
        self.u8(kind_code(p.kind).0);
        self.u8(u8::from(p.trimmed) | u8::from(p.ecn) << 1);
        self.u8(p.class);
        self.u16(p.path);
        self.u16(p.size);
        for v in [p.conn, p.flow, p.psn, p.ev, p.src, p.dst, p.via] {
            self.u32(v);
        }
        for v in p.ext.words() {
            self.u32(v);
        }
    }

    pub fn event(&mut self, e: Event) {
        let (code, index) = event_code(e);
        self.u8(code);
        self.u32(index);
    }

    /// The bytes [`Writer::mail`] writes for `mail`: 16, and 59 a packet (its wire and time
    /// beside it), 21 a notice.
    pub fn mail_len(mail: &Mail) -> usize {
        16 + mail.packets.len() * (12 + PACKET) + mail.notices.len() * 21
    }

    /// What piece `from` sends piece `to`.
    pub fn mail(&mut self, from: u32, to: u32, mail: &Mail) {
        self.u32(from);
        self.u32(to);
        self.u32(mail.packets.len() as u32);
        for (wire, at, p) in &mail.packets {
            self.u32(*wire);
            self.u64(*at);
            self.packet(p);
        }
        self.u32(mail.notices.len() as u32);
        for n in &mail.notices {
            self.u64(n.at);
            self.u64(n.order);
            self.event(n.event);
        }
    }
}

/// Bytes being read, in the order [`Writer`] wrote them; a short or malformed buffer is a bug
/// of the ranks' protocol, and panics.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    pub fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        out.copy_from_slice(&self.bytes[self.at..self.at + N]);
        self.at += N;
        out
    }
    pub fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    pub fn u128(&mut self) -> u128 {
        u128::from_le_bytes(self.take())
    }

    pub fn packet(&mut self) -> Packet {
        let kind = kind_of(self.u8(), 0);
        let flags = self.u8();
        let (class, path, size) = (self.u8(), self.u16(), self.u16());
        let [conn, flow, psn, ev, src, dst, via] = std::array::from_fn(|_| self.u32());
        let ext = Ext::from_words(std::array::from_fn(|_| self.u32()));
        Packet { kind, trimmed: flags & 1 != 0, ecn: flags & 2 != 0, class, path, size, conn, flow, psn, ev, src, dst, via, ext }
    }

    pub fn event(&mut self) -> Event {
        let code = self.u8();
        event_of(code, self.u32())
    }

    /// What [`Writer::mail`] wrote: (from, to, mail).
    pub fn mail(&mut self) -> (u32, u32, Mail) {
        let (from, to) = (self.u32(), self.u32());
        let packets = (0..self.u32()).map(|_| (self.u32(), self.u64() as Time, self.packet())).collect();
        let notices = (0..self.u32()).map(|_| Notice { at: self.u64(), order: self.u64(), event: self.event() }).collect();
        (from, to, Mail { packets, notices })
    }
}

/// A code for each variant of an enum that crosses ranks, the list written once: the encoding
/// (`$code`: the variant's code and its payload, 0 without one) and the decoding (`$of`; a code
/// no variant has is a bug of the ranks' protocol, and panics) are made from it, and `$count`
/// says how many codes there are.
macro_rules! codes {
    ($ty:ident, $code:ident, $of:ident, $count:ident: $($n:literal => $v:ident $(($i:ident))?),+ $(,)?) => {
        fn $code(e: $ty) -> (u8, u32) {
            match e {
                $($ty::$v $(($i))? => ($n, 0 $(+ $i)?),)+
            }
        }

        fn $of(code: u8, payload: u32) -> $ty {
            let _ = payload;
            match code {
                $($n => $ty::$v $(({ let $i = payload; $i }))?,)+
                _ => panic!("{} {code} from another rank", stringify!($ty)),
            }
        }

        #[cfg(test)]
        const $count: u8 = [$($n),+].len() as u8;
    };
}

codes!(Kind, kind_code, kind_of, KINDS: 0 => Data, 1 => Ack, 2 => Nack, 3 => Cnp, 4 => Pfc);

codes!(Event, event_code, event_of, EVENTS:
    0 => PortFree(i),
    1 => PipeArrive(i),
    2 => ConnStart(i),
    3 => Release(i),
    4 => Rto(i),
    5 => NicWake(i),
    6 => CcTimer(i),
    7 => CnpTimer(i),
    8 => UpSend(i),
    9 => UpArrive(i),
    10 => UpDone(i),
    11 => UpAck(i),
    12 => Computed(i),
    13 => Faults,
    14 => Watch,
    15 => Sample,
    16 => Window,
    17 => UpFree(i),
    18 => UpBegin(i),
    19 => Posted(i),
    20 => Generate,
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{AckExt, DataExt};

    #[test]
    fn mail_reads_back_as_written() {
        let data = Packet::data(7, 9, 2, 123, 0xdead_beef, (3, 77), 4096, DataExt { ack_request: true });
        let mut marked = data;
        (marked.ecn, marked.trimmed, marked.path, marked.via) = (true, true, 513, 41);
        let ack = data.ack(77, 64, (120, 0xffff_0000_1234));
        assert_eq!(ack.ext::<AckExt>().sack, 0xffff_0000_1234);
        let mail = Mail {
            packets: vec![(5, 1_000_001, data), (6, 2, marked), (0, Time::MAX, ack)],
            notices: vec![
                Notice { at: 42, order: u64::MAX - 1, event: Event::Release(8) },
                Notice { at: 43, order: 0, event: Event::UpArrive(u32::MAX) },
            ],
        };
        let mut w = Writer::default();
        w.mail(3, 11, &mail);
        assert_eq!(w.0.len(), 16 + 3 * (12 + 47) + 2 * 21, "47 bytes a packet");
        assert_eq!(Writer::mail_len(&mail), w.0.len());
        let mut r = Reader::new(&w.0);
        let (from, to, back) = r.mail();
        assert!(r.done());
        assert_eq!((from, to), (3, 11));
        assert_eq!(format!("{:?}", back.packets), format!("{:?}", mail.packets));
        assert_eq!(back.notices, mail.notices);
        // every code reads back as written, each code a variant of its own
        for code in 0..EVENTS {
            let e = event_of(code, 99);
            assert_eq!(
                event_code(e),
                (code, if matches!(e, Event::Faults | Event::Watch | Event::Sample | Event::Window | Event::Generate) { 0 } else { 99 })
            );
        }
        for code in 0..KINDS {
            assert_eq!(kind_code(kind_of(code, 0)), (code, 0));
        }
    }
}
