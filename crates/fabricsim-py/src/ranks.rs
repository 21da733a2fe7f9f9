//! A run across processes from Python: the core's [`Exchange`] over two Python callables, an
//! MPI communicator's `allgather` and `alltoall` (mpi4py's, `fabricsim.mpi`). The run goes on
//! without the GIL; each collective call takes it for the call.

use std::sync::Mutex;

use fabricsim_core::sim::ranks::Exchange;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// `allgather(bytes) -> list[bytes]` and `alltoall(list[bytes]) -> list[bytes]` of one rank.
pub struct PyExchange {
    pub rank: usize,
    pub ranks: usize,
    pub allgather: Py<PyAny>,
    pub alltoall: Py<PyAny>,
    /// What a call raised first: the run cannot go on without its ranks, so the call panics
    /// and the caller raises this instead of the panic.
    pub failed: Mutex<Option<PyErr>>,
}

impl PyExchange {
    fn call(&self, f: &Py<PyAny>, arg: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>>) -> Vec<Vec<u8>> {
        let got = Python::attach(|py| -> PyResult<Vec<Vec<u8>>> {
            let out = f.call1(py, (arg(py)?,))?;
            let list: Vec<Vec<u8>> = out.extract(py)?;
            if list.len() != self.ranks {
                let text = format!("an MPI collective gave {} buffers for {} ranks", list.len(), self.ranks);
                return Err(pyo3::exceptions::PyRuntimeError::new_err(text));
            }
            Ok(list)
        });
        got.unwrap_or_else(|e| {
            let text = e.to_string();
            self.failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(e);
            panic!("rank {} of {}: an MPI collective failed: {text}", self.rank, self.ranks)
        })
    }
}

impl Exchange for PyExchange {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn all_gather(&self, mine: Vec<u8>) -> Vec<Vec<u8>> {
        self.call(&self.allgather, |py| Ok(PyBytes::new(py, &mine).into_any()))
    }

    fn all_to_all(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        self.call(&self.alltoall, |py| Ok(pyo3::types::PyList::new(py, out.iter().map(|b| PyBytes::new(py, b)))?.into_any()))
    }
}
