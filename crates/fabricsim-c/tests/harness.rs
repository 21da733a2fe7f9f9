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

/// Compiles `sources` (paths under the crate) with the include directories `includes` into
/// an executable linked to the library; returns its path. `compiler`: the variable naming it
/// and its default (`("CXX", "c++")` or `("CC", "cc")`); `std`: the language's standard flag.
fn compile(name: &str, (var, default): (&str, &str), std: &str, sources: &[&str], includes: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = library_dir();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let cc = std::env::var(var).unwrap_or_else(|_| default.into());
    let mut cmd = Command::new(&cc);
    cmd.args([std, "-O1", "-Wall", "-Werror"]);
    for i in includes {
        cmd.arg("-I").arg(dir.join(i));
    }
    for s in sources {
        cmd.arg(dir.join(s));
    }
    cmd.arg("-L").arg(&lib).arg(format!("-Wl,-rpath,{}", lib.display())).args(["-lfabricsim_c", "-o"]).arg(&out);
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("{cc} could not be run ({e}): the harness needs a C11 and a C++17 compiler (Debian: gcc, g++)"));
    assert!(status.success(), "{name} does not compile");
    out
}

const CXX: (&str, &str) = ("CXX", "c++");

#[test]
fn the_cpp_harness_drives_a_ring_allreduce_to_the_native_jct() {
    let out = compile("fabricsim-c-ring", CXX, "-std=c++17", &["tests/harness/ring.cpp"], &["include"]);
    for threads in ["1", "2"] {
        let run = Command::new(&out).arg(threads).output().expect("the harness runs");
        let text = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{threads} thread(s):\n{text}");
        assert_eq!(text.matches("identical").count(), 2, "{text}");
    }
}

#[test]
fn the_astra_sim_backend_runs_a_ring_allreduce_to_the_native_jct() {
    // the backend's own code (astra-sim/), against the API's declaration in tests/harness/astra-api
    let out = compile(
        "fabricsim-c-astra-ring",
        CXX,
        "-std=c++17",
        &["tests/harness/astra_ring.cpp", "astra-sim/FabricsimNetworkApi.cc"],
        &["include", "astra-sim", "tests/harness/astra-api"],
    );
    for threads in ["1", "2"] {
        let run = Command::new(&out).arg(threads).output().expect("the harness runs");
        let text = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{threads} thread(s):\n{text}");
        assert!(text.contains("identical"), "{text}");
    }
}

#[test]
fn the_interface_works_from_c_and_its_arrow_arrays_agree_with_the_run() {
    // C11, not C++: the header is plain C
    let out = compile("fabricsim-c-api", ("CC", "cc"), "-std=c11", &["tests/harness/c_api.c"], &["include"]);
    let run = Command::new(&out).output().expect("the C program runs");
    let text = String::from_utf8_lossy(&run.stdout).into_owned() + &String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{text}");
    assert!(text.contains("FCT") && text.contains("traffic") && text.contains("after:"), "{text}");
}
