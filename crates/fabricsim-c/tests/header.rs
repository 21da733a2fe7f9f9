//! `include/fabricsim.h` is what cbindgen makes of `src/lib.rs` (with `cbindgen.toml`): a
//! change to the interface that forgets the header fails here. `FABRICSIM_BLESS=1` writes it.

use std::path::Path;

#[test]
fn the_committed_header_is_cbindgens() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml reads");
    let mut made = Vec::new();
    cbindgen::Builder::new().with_crate(dir).with_config(config).generate().expect("the header generates").write(&mut made);
    let made = String::from_utf8(made).expect("UTF-8");
    let path = dir.join("include").join("fabricsim.h");
    if std::env::var_os("FABRICSIM_BLESS").is_some() {
        std::fs::write(&path, &made).expect("the header writes");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == made, "include/fabricsim.h is stale: run FABRICSIM_BLESS=1 cargo test -p fabricsim-c --test header");
}
