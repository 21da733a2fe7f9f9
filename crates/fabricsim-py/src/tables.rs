//! Results as the Python side reads them: each table's columns as little-endian bytes (strings
//! as lists), the summary, accounting and scenario as JSON.

use fabricsim_core::stats::{Column, Table};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// A run's results as the Python side reads them: {"flows": {column: list}, "ports": {...},
/// "summary": json, "accounting": json, "scenario": json}.
pub fn result_dict(py: Python<'_>, r: fabricsim_core::stats::RunResult) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("flows", table(py, r.flows)?)?;
    out.set_item("ports", table(py, r.ports)?)?;
    out.set_item("reorder", table(py, r.reorder)?)?;
    out.set_item("samples", table(py, r.samples)?)?;
    out.set_item("jobs", table(py, r.jobs)?)?;
    out.set_item("steps", table(py, r.steps)?)?;
    out.set_item("buckets", table(py, r.buckets)?)?;
    out.set_item("summary", serde_json::to_string(&r.summary).unwrap_or_default())?;
    out.set_item("accounting", serde_json::to_string(&r.accounting).unwrap_or_default())?;
    out.set_item("scenario", r.scenario_json)?;
    Ok(out)
}

/// A table as `{name: column}`: numbers cross as their little-endian bytes (u64, f64; bool as
/// one byte each), a column with nulls as `(values, validity)` with a byte per row (1 =
/// present), strings as a list, or (a code byte per row, the values) where few values repeat. Each column's memory is freed once it is copied, so the
/// hand-over needs one column more than the table, not a Python object per value.
fn table(py: Python<'_>, t: Table) -> PyResult<Bound<'_, PyDict>> {
    fn bytes<'py, T: Copy>(py: Python<'py>, v: &[T], f: impl Fn(T) -> [u8; 8]) -> Bound<'py, PyBytes> {
        PyBytes::new_with(py, v.len() * 8, |buf| {
            for (chunk, &x) in buf.chunks_exact_mut(8).zip(v) {
                chunk.copy_from_slice(&f(x));
            }
            Ok(())
        })
        .expect("filling a buffer cannot fail")
    }
    fn validity<'py>(py: Python<'py>, v: &[bool]) -> Bound<'py, PyBytes> {
        PyBytes::new_with(py, v.len(), |buf| {
            for (b, &ok) in buf.iter_mut().zip(v) {
                *b = u8::from(ok);
            }
            Ok(())
        })
        .expect("filling a buffer cannot fail")
    }
    let d = PyDict::new(py);
    for (name, col) in t.columns {
        let value = match col {
            Column::U64(v) => bytes(py, &v, u64::to_le_bytes).into_any(),
            Column::F64(v) => bytes(py, &v, f64::to_le_bytes).into_any(),
            Column::Bool(v) => validity(py, &v).into_any(),
            Column::Str(v) => PyList::new(py, v)?.into_any(),
            // a byte per row and the values once: no Python string per row
            Column::Labels(v) => (PyBytes::new(py, &v.codes), PyList::new(py, v.labels)?).into_pyobject(py)?.into_any(),
            Column::OptU64(v) => (bytes(py, &v.values, u64::to_le_bytes), validity(py, &v.valid)).into_pyobject(py)?.into_any(),
            Column::OptF64(v) => (bytes(py, &v.values, f64::to_le_bytes), validity(py, &v.valid)).into_pyobject(py)?.into_any(),
        };
        d.set_item(name, value)?;
    }
    Ok(d)
}
