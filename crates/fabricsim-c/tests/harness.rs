//! The C++ harness (`tests/harness/ring.cpp`): fabricsim driven through its C interface with
//! ASTRA-sim's call pattern (posted and early receives, scheduled callbacks, several ranks) runs
//! a ring allreduce to the native job's JCT, to the picosecond, on 1 and 2 threads, and twice
//! alike. Compiled here with the system's C++ compiler (`CXX`, else `c++`) against the library
//! cargo built for this test.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory holding the cdylib cargo built with this test (`target/<profile>`).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe.parent().expect("deps").to_path_buf();
    let profile = deps.parent().expect("the profile's directory").to_path_buf();
    let name = format!("{}fabricsim_c{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    [profile, deps].into_iter().find(|d| d.join(&name).exists()).unwrap_or_else(|| panic!("{name} not built next to {}", exe.display()))
}

#[test]
fn the_cpp_harness_drives_a_ring_allreduce_to_the_native_jct() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = library_dir();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fabricsim-c-ring");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let status = Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-Wall", "-Werror", "-I"])
        .arg(dir.join("include"))
        .arg(dir.join("tests/harness/ring.cpp"))
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lfabricsim_c", "-o"])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("{cxx} could not be run ({e}): the harness needs a C++17 compiler (Debian: g++)"));
    assert!(status.success(), "the harness does not compile");
    for threads in ["1", "2"] {
        let run = Command::new(&out).arg(threads).output().expect("the harness runs");
        let text = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{threads} thread(s):\n{text}");
        assert_eq!(text.matches("identical").count(), 2, "{text}");
    }
}
