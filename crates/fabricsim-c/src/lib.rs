//! fabricsim's C interface: a session (a run that takes messages while it runs and reports
//! each completion, `fabricsim_core::sim::session`) behind plain C functions, for tools that
//! drive a network from outside: ASTRA-sim's network API, a co-simulator, a C or C++ loop.
//! The header, `include/fabricsim.h`, is generated from this file by cbindgen (a test checks
//! that the committed one is current); docs/embedding.md, "From C", shows a whole program.
//!
//! Rules, as the header states them:
//! - **Status.** Every call that can fail returns an `FsStatus`: `FS_OK`, `FS_ENDED` (the run
//!   stopped by one of its guards: `stop.max_time`, `max_events`, ..., or no progress),
//!   `FS_NONE` (nothing to report: no next event) or `FS_ERROR`. After `FS_ERROR`,
//!   `fs_last_error()` gives the reason in the words the command line prints (`field: got
//!   VALUE; allowed ...`), valid on the calling thread until its next call into this library.
//! - **Ownership.** `fs_session_new` gives the caller a session, which it frees with
//!   `fs_session_free` (once; `NULL` is ignored). Strings the library returns through an
//!   out-pointer (`fs_results_json`) are the caller's, freed with `fs_string_free`; the
//!   string `fs_last_error` returns stays the library's. Pointers passed in are only read
//!   during the call.
//! - **Threads.** A session is used by one thread at a time; separate sessions are
//!   independent. A session runs its simulation on the threads its `threads` argument asks
//!   for; results are bit-identical on any count.
//! - **Time** is integer picoseconds throughout (`FS_NOW`: the session's clock).
//!
//! No call panics across the boundary: a panic inside the simulator (a bug) is caught and
//! reported as `FS_ERROR` with its message.

mod arrow;

pub use arrow::{ArrowArray, ArrowSchema};
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use fabricsim_core::sim::session::Session;
use fabricsim_core::stats::{Column, RunResult, Table};
use fabricsim_core::Scenario;
use fabricsim_core::ScenarioError;
use fabricsim_core::Status;

/// What a call did.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsStatus {
    /// Done; the run goes on.
    FS_OK = 0,
    /// Done; the run has ended (one of its guards stopped it): nothing more will complete.
    FS_ENDED = 1,
    /// Nothing to report (`fs_next_event_time`: no event is scheduled).
    FS_NONE = 2,
    /// Refused or failed: `fs_last_error()` says why.
    FS_ERROR = -1,
}

/// `at_ps` of [`fs_send`] meaning the session's clock.
pub const FS_NOW: u64 = u64::MAX;

/// A message that completed: the id [`fs_send`] returned, the tag it was sent with, when it
/// was released and when its receiver had every byte, and its FCT as the flows table gives
/// it (from its first packet sent).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsCompletion {
    pub id: u32,
    pub tag: u64,
    pub start_ps: u64,
    pub end_ps: u64,
    pub fct_ps: u64,
}

/// A session: opaque to C.
pub struct FsSession {
    inner: Session,
    /// The tag of each message sent through [`fs_send`], by id (a message of the scenario's
    /// own workload has tag `u64::MAX`).
    tags: Vec<u64>,
    /// Completions polled from the session and not yet handed to the caller.
    pending: std::collections::VecDeque<FsCompletion>,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_error(message: impl Into<String>) -> FsStatus {
    let text = message.into().replace('\0', " ");
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::new(text).unwrap_or_default());
    FsStatus::FS_ERROR
}

/// Runs `f`, turning a refusal or a panic into `FS_ERROR` with its message.
fn guarded(f: impl FnOnce() -> Result<FsStatus, String>) -> FsStatus {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(status)) => status,
        Ok(Err(message)) => set_error(message),
        Err(panic) => {
            let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
            set_error(format!("internal error: {}", what.unwrap_or_else(|| "a panic".into())))
        }
    }
}

fn text(e: ScenarioError) -> String {
    e.to_string()
}

fn status(s: Status) -> FsStatus {
    if s == Status::Running {
        FsStatus::FS_OK
    } else {
        FsStatus::FS_ENDED
    }
}

/// The session behind a pointer the caller passed, or the error for a null one.
fn session<'a>(s: *mut FsSession) -> Result<&'a mut FsSession, String> {
    // SAFETY: a non-null pointer passed here is one `fs_session_new` returned and the caller
    // has not freed (the header's ownership rule); it is used by one thread at a time
    unsafe { s.as_mut() }.ok_or_else(|| "session: got NULL; allowed: a session from fs_session_new".to_string())
}

/// Parses scenario text: JSON if it starts with `{`, TOML otherwise.
fn parse(text: &str) -> Result<Scenario, String> {
    if text.trim_start().starts_with('{') {
        return Scenario::from_json(text).map_err(self::text);
    }
    let table: toml::Table = toml::from_str(text).map_err(|e| format!("scenario: not valid TOML or JSON: {}", e.message()))?;
    Scenario::from_deserializer(table).map_err(self::text)
}

/// The message `fs_last_error` returns: why the last call on this thread returned
/// `FS_ERROR` (empty before any). The library's: valid until the thread's next call.
#[no_mangle]
pub extern "C" fn fs_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Creates a session from scenario text (TOML, or JSON starting with `{`; it may have no
/// workload) on `threads` threads (0: the engine's choice, as `threads = "auto"`). On
/// `FS_OK`, `*out` is the caller's session; on `FS_ERROR` it is left as it was.
///
/// # Safety
/// `scenario` is a NUL-terminated UTF-8 string; `out` points to writable storage for a
/// pointer.
#[no_mangle]
pub unsafe extern "C" fn fs_session_new(scenario: *const c_char, threads: u32, out: *mut *mut FsSession) -> FsStatus {
    guarded(|| {
        if scenario.is_null() || out.is_null() {
            return Err("scenario: got NULL; allowed: scenario text and a place for the session".into());
        }
        // SAFETY: the caller passes a NUL-terminated string (see # Safety)
        let text =
            unsafe { CStr::from_ptr(scenario) }.to_str().map_err(|_| "scenario: got bytes that are not UTF-8; allowed: UTF-8 text")?;
        let scenario = parse(text)?;
        let inner = Session::new(&scenario, (threads > 0).then_some(threads as usize)).map_err(self::text)?;
        let s = Box::new(FsSession { inner, tags: Vec::new(), pending: Default::default() });
        // SAFETY: `out` is writable (see # Safety)
        unsafe { *out = Box::into_raw(s) };
        Ok(FsStatus::FS_OK)
    })
}

/// Frees a session (`NULL`: nothing).
///
/// # Safety
/// `s` is `NULL` or a session from `fs_session_new` not freed before.
#[no_mangle]
pub unsafe extern "C" fn fs_session_free(s: *mut FsSession) {
    if !s.is_null() {
        // SAFETY: the caller gives back a session it owns (see # Safety)
        drop(unsafe { Box::from_raw(s) });
    }
}

/// Sends `bytes` from host `src` to host `dst` at `at_ps` (`FS_NOW`: the session's clock, or
/// any later time), with `tag` returned in its completion; `*id` (if not `NULL`) is its id,
/// its row in the flows table. Refused (naming the argument) as `fabricsim.Session.send` is.
///
/// # Safety
/// `s` is a live session; `id` is `NULL` or writable.
#[no_mangle]
pub unsafe extern "C" fn fs_send(s: *mut FsSession, src: u32, dst: u32, bytes: u64, at_ps: u64, tag: u64, id: *mut u32) -> FsStatus {
    // SAFETY: as the caller promised (see # Safety), and no list of what it waits for
    unsafe { fs_send_after(s, src, dst, bytes, at_ps, tag, std::ptr::null(), 0, id) }
}

/// [`fs_send`] of a message that also waits for the `n_after` messages at `after` (ids
/// [`fs_send`] returned, or rows of the scenario's own workload; each crossing the fabric):
/// it is released once its source has heard that each completed (at once at a message's
/// receiver, at its final ACK at its sender, by the receiver's notice elsewhere), as
/// `fabricsim.Session.send`'s `after` is. Refused (naming `after`) for an id the session has
/// not given.
///
/// # Safety
/// `s` is a live session; `after` points to `n_after` ids (or is `NULL` with `n_after` 0);
/// `id` is `NULL` or writable.
#[no_mangle]
#[allow(clippy::too_many_arguments, reason = "a C function's arguments: a struct for them would be harder to call")]
pub unsafe extern "C" fn fs_send_after(
    s: *mut FsSession,
    src: u32,
    dst: u32,
    bytes: u64,
    at_ps: u64,
    tag: u64,
    after: *const u32,
    n_after: usize,
    id: *mut u32,
) -> FsStatus {
    guarded(|| {
        let s = session(s)?;
        let at = (at_ps != FS_NOW).then_some(at_ps);
        let after: &[u32] = match (after.is_null(), n_after) {
            (_, 0) => &[],
            (true, n) => return Err(format!("after: got NULL with n_after {n}; allowed: a list of n_after ids, or NULL with 0")),
            // SAFETY: `after` points to `n_after` ids (see # Safety)
            (false, n) => unsafe { std::slice::from_raw_parts(after, n) },
        };
        let m = s.inner.send_after(src, dst, bytes, at, after).map_err(text)?;
        let m_index = m as usize;
        if s.tags.len() <= m_index {
            s.tags.resize(m_index + 1, u64::MAX);
        }
        s.tags[m_index] = tag;
        if !id.is_null() {
            // SAFETY: `id` is writable (see # Safety)
            unsafe { *id = m };
        }
        Ok(FsStatus::FS_OK)
    })
}

/// Runs every event at `t_ps` or before; the clock is `t_ps` afterwards (`FS_OK`), unless one
/// of the run's guards ended it first (`FS_ENDED`).
///
/// # Safety
/// `s` is a live session.
#[no_mangle]
pub unsafe extern "C" fn fs_run_until(s: *mut FsSession, t_ps: u64) -> FsStatus {
    guarded(|| {
        let s = session(s)?;
        Ok(status(s.inner.run_until(t_ps).map_err(text)?))
    })
}

/// Runs until a message completes (every event of that instant included) or, if none does
/// by then, every event at `limit_ps` or before; `fs_completions` gives what completed.
///
/// # Safety
/// `s` is a live session.
#[no_mangle]
pub unsafe extern "C" fn fs_run_until_completion(s: *mut FsSession, limit_ps: u64) -> FsStatus {
    guarded(|| {
        let s = session(s)?;
        Ok(status(s.inner.run_until_completion(limit_ps).map_err(text)?))
    })
}

/// `*t_ps` is the time of the next scheduled event (`FS_OK`), or there is none (`FS_NONE`).
///
/// # Safety
/// `s` is a live session; `t_ps` is writable.
#[no_mangle]
pub unsafe extern "C" fn fs_next_event_time(s: *mut FsSession, t_ps: *mut u64) -> FsStatus {
    guarded(|| {
        let s = session(s)?;
        if t_ps.is_null() {
            return Err("t_ps: got NULL; allowed: a place for the time".into());
        }
        match s.inner.next_event_time() {
            Some(t) => {
                // SAFETY: `t_ps` is writable (see # Safety)
                unsafe { *t_ps = t };
                Ok(FsStatus::FS_OK)
            }
            None => Ok(FsStatus::FS_NONE),
        }
    })
}

/// The session's clock, ps (0 for `NULL`).
///
/// # Safety
/// `s` is `NULL` or a live session.
#[no_mangle]
pub unsafe extern "C" fn fs_now(s: *const FsSession) -> u64 {
    // SAFETY: `s` is NULL or live (see # Safety); only read
    unsafe { s.as_ref() }.map_or(0, |s| s.inner.now())
}

/// Writes up to `cap` of the messages completed since they were last taken into `out`, by
/// time of completion then id; returns how many (0: none left). Call again while it
/// returns `cap`.
///
/// # Safety
/// `s` is a live session; `out` points to `cap` writable `FsCompletion`s.
#[no_mangle]
pub unsafe extern "C" fn fs_completions(s: *mut FsSession, out: *mut FsCompletion, cap: usize) -> usize {
    let mut written = 0;
    let status = guarded(|| {
        let s = session(s)?;
        if out.is_null() && cap > 0 {
            return Err("out: got NULL; allowed: room for cap completions".into());
        }
        let fresh = s.inner.completions();
        let tags = &s.tags;
        s.pending.extend(fresh.into_iter().map(|c| FsCompletion {
            id: c.id,
            tag: tags.get(c.id as usize).copied().unwrap_or(u64::MAX),
            start_ps: c.start,
            end_ps: c.end,
            fct_ps: c.fct,
        }));
        while written < cap {
            let Some(c) = s.pending.pop_front() else { break };
            // SAFETY: `out` has room for `cap` completions (see # Safety)
            unsafe { *out.add(written) = c };
            written += 1;
        }
        Ok(FsStatus::FS_OK)
    });
    if status == FsStatus::FS_ERROR {
        0
    } else {
        written
    }
}

/// The results so far as JSON (the session goes on): `{"summary": {...}, "flows": {...},
/// "jobs": {...}, "steps": {...}, "ports": {...}}`, each table an object of columns (arrays;
/// `null` where a value is missing), the same tables and columns as `fabricsim.run`'s. `*json`
/// is the caller's, freed with `fs_string_free`.
///
/// # Safety
/// `s` is a live session; `json` is writable.
#[no_mangle]
pub unsafe extern "C" fn fs_results_json(s: *mut FsSession, json: *mut *mut c_char) -> FsStatus {
    guarded(|| {
        let s = session(s)?;
        if json.is_null() {
            return Err("json: got NULL; allowed: a place for the text".into());
        }
        let text = results_json(&s.inner.results());
        let c = CString::new(text).map_err(|_| "results: a NUL byte in the text".to_string())?;
        // SAFETY: `json` is writable (see # Safety)
        unsafe { *json = c.into_raw() };
        Ok(FsStatus::FS_OK)
    })
}

/// The results table `table` so far (`"flows"`, `"jobs"`, `"steps"`, `"ports"`, `"reorder"`,
/// `"samples"` or `"buckets"`: the tables of `fabricsim.run`, the same columns) as Arrow
/// arrays through the Arrow C data interface: `*schema` and `*array` are a struct array of its
/// columns (uint64 `L`, float64 `g`, bool `b`, utf8 `u`; a column with missing values nullable,
/// with a validity bitmap), the caller's, released by calling their `release` once each.
///
/// # Safety
/// `s` is a live session; `table` a NUL-terminated string; `schema` and `array` point to
/// writable structs, which the call fills (their previous contents are not released).
#[no_mangle]
pub unsafe extern "C" fn fs_results_arrow(
    s: *mut FsSession,
    table: *const c_char,
    schema: *mut ArrowSchema,
    array: *mut ArrowArray,
) -> FsStatus {
    guarded(|| {
        let s = session(s)?;
        if table.is_null() || schema.is_null() || array.is_null() {
            return Err("table: got NULL; allowed: a table's name and places for the schema and the array".into());
        }
        // SAFETY: a NUL-terminated string (see # Safety)
        let name = unsafe { CStr::from_ptr(table) }.to_string_lossy().into_owned();
        let r = s.inner.results();
        let t = match name.as_str() {
            "flows" => &r.flows,
            "jobs" => &r.jobs,
            "steps" => &r.steps,
            "ports" => &r.ports,
            "reorder" => &r.reorder,
            "samples" => &r.samples,
            "buckets" => &r.buckets,
            _ => return Err(format!("table: got {name:?}; allowed: flows, jobs, steps, ports, reorder, samples, buckets")),
        };
        let (sc, ar) = arrow::export(t)?;
        // SAFETY: both are writable (see # Safety)
        unsafe {
            ptr::write(schema, sc);
            ptr::write(array, ar);
        }
        Ok(FsStatus::FS_OK)
    })
}

/// Frees a string the library gave the caller (`NULL`: nothing).
///
/// # Safety
/// `p` is `NULL` or a string from `fs_results_json` not freed before.
#[no_mangle]
pub unsafe extern "C" fn fs_string_free(p: *mut c_char) {
    if !p.is_null() {
        // SAFETY: the caller gives back a string this library made (see # Safety)
        drop(unsafe { CString::from_raw(p) });
    }
}

fn table_json(t: &Table) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let nullable = |values: Vec<Value>, valid: &[bool]| -> Value {
        Value::Array(values.into_iter().zip(valid).map(|(v, &ok)| if ok { v } else { Value::Null }).collect())
    };
    let mut out = Map::new();
    for (name, column) in &t.columns {
        let v = match column {
            Column::U64(v) => json!(v),
            Column::F64(v) => json!(v),
            Column::Bool(v) => json!(v),
            Column::Str(v) => json!(v),
            Column::Labels(l) => json!((0..l.codes.len()).map(|i| l.get(i)).collect::<Vec<_>>()),
            Column::OptU64(n) => nullable(n.values.iter().map(|&x| json!(x)).collect(), &n.valid),
            Column::OptF64(n) => nullable(n.values.iter().map(|&x| json!(x)).collect(), &n.valid),
        };
        out.insert((*name).to_string(), v);
    }
    Value::Object(out)
}

/// A run's results as the JSON [`fs_results_json`] gives.
pub fn results_json(r: &RunResult) -> String {
    let value = serde_json::json!({
        "summary": serde_json::to_value(&r.summary).unwrap_or_default(),
        "flows": table_json(&r.flows),
        "jobs": table_json(&r.jobs),
        "steps": table_json(&r.steps),
        "ports": table_json(&r.ports),
    });
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_astra_sim_example_networks_are_valid_scenarios() {
        for name in ["hgx_h100_8.toml", "leaf_8.toml"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("astra-sim").join(name);
            let text = CString::new(std::fs::read_to_string(&path).expect("the example reads")).expect("no NUL");
            let mut s: *mut FsSession = std::ptr::null_mut();
            // SAFETY: a NUL-terminated string and a place for the session; freed below
            let status = unsafe { fs_session_new(text.as_ptr(), 1, &mut s) };
            // SAFETY: fs_last_error's string is valid until this thread's next call
            let why = unsafe { CStr::from_ptr(fs_last_error()) }.to_string_lossy().into_owned();
            assert_eq!(status, FsStatus::FS_OK, "{name}: {why}");
            // SAFETY: the session was made above and is freed once
            unsafe { fs_session_free(s) };
        }
    }

    #[test]
    fn a_null_session_or_bad_text_is_refused_with_a_reason() {
        // SAFETY: NULL is allowed and refused
        assert_eq!(unsafe { fs_run_until(std::ptr::null_mut(), 5) }, FsStatus::FS_ERROR);
        // SAFETY: as above
        assert!(unsafe { CStr::from_ptr(fs_last_error()) }.to_string_lossy().starts_with("session: got NULL"));
        let text = CString::new("[topology]\nhosts = \"many\"\n").unwrap();
        let mut s: *mut FsSession = std::ptr::null_mut();
        // SAFETY: a NUL-terminated string and a place for the session
        assert_eq!(unsafe { fs_session_new(text.as_ptr(), 1, &mut s) }, FsStatus::FS_ERROR);
        assert!(s.is_null(), "left as it was");
        // SAFETY: as above
        let why = unsafe { CStr::from_ptr(fs_last_error()) }.to_string_lossy().into_owned();
        assert!(why.starts_with("topology.hosts"), "{why}");
    }
}
