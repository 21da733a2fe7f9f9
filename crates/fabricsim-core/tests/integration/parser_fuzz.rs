//! The scenario parser and validator on hostile text: never a panic, and a scenario they
//! accept is recorded (filled in, as JSON) in a form that is accepted again, identically.
//!
//! [`check`] is the body of the libFuzzer target too (`fuzz/fuzz_targets/scenario.rs`, run
//! by `make fuzz-core` on nightly Rust); here a fixed, seeded mutation of every shipped
//! scenario exercises it on stable Rust in CI.

use fabricsim_core::Scenario;

/// Parses `data` as a TOML scenario and as a JSON one, validates what parses, and checks that
/// an accepted scenario's record parses and validates to the same model. Panics on a bug;
/// returns how many of the two readings were accepted.
pub fn check(data: &[u8]) -> usize {
    let mut accepted = 0;
    let Ok(text) = std::str::from_utf8(data) else { return 0 };
    let parsed = toml::from_str::<toml::Table>(text).ok().and_then(|t| Scenario::from_deserializer(t).ok());
    for scenario in parsed.into_iter().chain(Scenario::from_json(text).ok()) {
        let Ok(model) = scenario.resolve() else { continue };
        let record = scenario.filled().to_json();
        let again = Scenario::from_json(&record).unwrap_or_else(|e| panic!("the record of an accepted scenario is refused: {e}\n{record}"));
        let model2 = again.resolve().unwrap_or_else(|e| panic!("the record of an accepted scenario does not validate: {e}\n{record}"));
        assert!(model.messages == model2.messages, "the record makes other messages: {record}");
        assert_eq!(again.filled().to_json(), record, "the record is a fixed point");
        accepted += 1;
    }
    accepted
}

#[cfg(test)]
mod tests {
    use super::check;

    /// Every scenario that ships: the golden ones and the examples, but those whose traffic
    /// is a file (`file = ...`: the Python front end reads it, the core reads no files).
    fn seeds() -> Vec<Vec<u8>> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut out = Vec::new();
        for dir in ["crates/fabricsim-core/tests/golden", "scenarios"] {
            let mut paths: Vec<_> = std::fs::read_dir(format!("{root}/{dir}")).unwrap().map(|e| e.unwrap().path()).collect();
            paths.sort();
            let texts = paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "toml")).map(|p| std::fs::read(p).unwrap());
            out.extend(texts.filter(|t| !String::from_utf8_lossy(t).lines().any(|l| l.trim_start().starts_with("file ="))));
        }
        out
    }

    /// A small deterministic generator (xorshift), so the corpus is the same on every run.
    struct Gen(u64);
    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Values that have broken parsers: extremes, odd units, wrong types.
    const NASTY: &[&str] = &[
        "0",
        "-1",
        "18446744073709551615",
        "1e308",
        "nan",
        "inf",
        "\"\"",
        "\"0ps\"",
        "\"1ps\"",
        "\"100001s\"",
        "\"18446744073709551615ps\"",
        "\"0bdp\"",
        "\"1e3bdp\"",
        "\"99999999999bdp\"",
        "\"0Gbps\"",
        "\"101Tbps\"",
        "\"1025GiB\"",
        "\"4GiB\"",
        "\"auto\"",
        "\"ecmp\"",
        "\"leaf0:up*\"",
        "\"*\"",
        "[]",
        "[1, 2]",
        "{}",
        "true",
        "1979-05-27",
        "\"0.0000000000000000000001bdp\"",
        "4294967296",
    ];

    fn mutate(g: &mut Gen, seed: &[u8], other: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(seed).into_owned();
        let lines: Vec<&str> = text.lines().collect();
        match g.below(5) {
            // replace one value with a nasty one
            0 if !lines.is_empty() => {
                let i = g.below(lines.len());
                let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
                if let Some((k, _)) = lines[i].split_once('=') {
                    l[i] = format!("{k}= {}", NASTY[g.below(NASTY.len())]);
                }
                l.join("\n").into_bytes()
            }
            // flip a byte
            // (an empty input, cut short before, has no byte to flip)
            1 if !seed.is_empty() => {
                let mut b = seed.to_vec();
                let i = g.below(b.len());
                b[i] ^= 1 << g.below(8);
                b
            }
            // cut it short
            2 => seed[..g.below(seed.len() + 1)].to_vec(),
            // splice a line of another scenario in
            3 => {
                let others: Vec<&str> = std::str::from_utf8(other).unwrap_or("").lines().collect();
                let mut l = lines.clone();
                l.insert(g.below(l.len() + 1), others.get(g.below(others.len())).copied().unwrap_or(""));
                l.join("\n").into_bytes()
            }
            // drop a line
            _ => {
                let mut l = lines.clone();
                if !l.is_empty() {
                    l.remove(g.below(l.len()));
                }
                l.join("\n").into_bytes()
            }
        }
    }

    #[test]
    fn the_parser_and_validator_survive_mutated_scenarios() {
        let seeds = seeds();
        assert!(seeds.len() >= 16);
        for s in &seeds {
            assert_eq!(check(s), 1, "{}", String::from_utf8_lossy(s));
        }
        let mut g = Gen(0x9E37_79B9_7F4A_7C15);
        let mut accepted = 0;
        for _ in 0..3000 {
            let (a, b) = (g.below(seeds.len()), g.below(seeds.len()));
            let mut input = mutate(&mut g, &seeds[a], &seeds[b]);
            // stack a second mutation now and then
            if g.below(3) == 0 {
                input = mutate(&mut g, &input, &seeds[b]);
            }
            accepted += check(&input);
        }
        // both sides of the validator are exercised
        assert!((300..2700).contains(&accepted), "{accepted} of 3000 accepted");
    }
}
