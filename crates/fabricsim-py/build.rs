//! Records the git commit the extension is built from (`fabricsim._core.__commit__`, written
//! into every result), when it is built from a checkout; nothing otherwise.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok().filter(|o| o.status.success())?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let Some(commit) = git(&["rev-parse", "HEAD"]) else { return };
    println!("cargo:rustc-env=FABRICSIM_COMMIT={commit}");
    // built again when the checkout moves to another commit
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head}");
        }
        println!("cargo:rerun-if-changed={dir}/packed-refs");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
