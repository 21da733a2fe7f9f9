//! libFuzzer target: arbitrary bytes as a TOML and a JSON scenario through the parser and the
//! validator. The body is the one CI runs on stable Rust over mutated shipped scenarios.
#![no_main]

#[path = "../../crates/fabricsim-core/tests/integration/parser_fuzz.rs"]
#[allow(dead_code)]
mod parser_fuzz;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    parser_fuzz::check(data);
});
