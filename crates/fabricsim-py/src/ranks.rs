//! A run across processes from Python: the core's [`Exchange`] over two Python callables
//! (`fabricsim._ranks.exchange`): an MPI communicator's `allgather` of a few bytes, and an
//! all-to-all of one buffer (mpi4py's `Alltoallv` of bytes, no pickling). The run goes on
//! without the GIL; each collective call takes it for the call.
//!
//! Memory: the window's packets for other ranks are copied once into the bytes object sent,
//! each rank's part freed as it is copied, and what comes back is read out of the buffer the
//! callable returns and freed with it: at most three copies of a window's crossing bytes live
//! at once (a pickled list of bytes made five).

use std::sync::Mutex;

use fabricsim_core::sim::ranks::Exchange;
use pyo3::buffer::PyBuffer;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// `allgather(bytes) -> list[bytes]` and `alltoallv(bytes, counts) -> (buffer, counts)` of
/// one rank: `counts[r]` bytes of the buffer, in rank order, for rank `r`, and back what each
/// rank sent this one.
pub struct PyExchange {
    pub rank: usize,
    pub ranks: usize,
    pub allgather: Py<PyAny>,
    pub alltoallv: Py<PyAny>,
    /// What a call raised first: the run cannot go on without its ranks, so the call panics
    /// and the caller raises this instead of the panic.
    pub failed: Mutex<Option<PyErr>>,
}

impl PyExchange {
    /// The result of a collective call, or a panic that the caller turns back into what it
    /// raised.
    fn done<T>(&self, got: PyResult<T>) -> T {
        got.unwrap_or_else(|e| {
            let text = e.to_string();
            self.failed.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get_or_insert(e);
            panic!("rank {} of {}: an MPI collective failed: {text}", self.rank, self.ranks)
        })
    }

    fn wrong(&self, what: &str, n: usize) -> PyErr {
        let text = format!("an MPI collective gave {n} {what} for {} ranks", self.ranks);
        pyo3::exceptions::PyRuntimeError::new_err(text)
    }
}

/// `counts` consecutive parts of `bytes` (moved where it is one part, else each copied out);
/// `None` where they do not add up to it.
fn split(bytes: Vec<u8>, counts: &[usize]) -> Option<Vec<Vec<u8>>> {
    if counts.iter().try_fold(0usize, |a, &n| a.checked_add(n)) != Some(bytes.len()) {
        return None;
    }
    if let Some(only) = counts.iter().position(|&n| n == bytes.len()) {
        let mut bytes = Some(bytes);
        return Some((0..counts.len()).map(|r| if r == only { bytes.take().unwrap_or_default() } else { Vec::new() }).collect());
    }
    let mut at = 0;
    Some(
        counts
            .iter()
            .map(|&n| {
                at += n;
                bytes[at - n..at].to_vec()
            })
            .collect(),
    )
}

impl Exchange for PyExchange {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.ranks
    }

    fn all_gather(&self, mine: Vec<u8>) -> Vec<Vec<u8>> {
        let got = Python::attach(|py| -> PyResult<Vec<Vec<u8>>> {
            let list: Vec<Vec<u8>> = self.allgather.call1(py, (PyBytes::new(py, &mine),))?.extract(py)?;
            if list.len() != self.ranks {
                return Err(self.wrong("buffers", list.len()));
            }
            Ok(list)
        });
        self.done(got)
    }

    fn all_to_all(&self, out: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let counts: Vec<usize> = out.iter().map(Vec::len).collect();
        let total = counts.iter().sum();
        let got = Python::attach(|py| -> PyResult<Vec<Vec<u8>>> {
            let send = PyBytes::new_with(py, total, |buf| {
                let mut at = 0;
                for part in out {
                    buf[at..at + part.len()].copy_from_slice(&part);
                    at += part.len();
                }
                Ok(())
            })?;
            let back = self.alltoallv.call1(py, (send, counts))?;
            let (buffer, counts): (Bound<'_, PyAny>, Vec<usize>) = back.extract(py)?;
            if counts.len() != self.ranks {
                return Err(self.wrong("counts", counts.len()));
            }
            // bytes, a bytearray or anything with the buffer protocol, copied out and let go
            let all = PyBuffer::<u8>::get(&buffer)?.to_vec(py)?;
            drop((buffer, back));
            let len = all.len();
            split(all, &counts).ok_or_else(|| {
                let text = format!("an MPI all-to-all gave {len} bytes for counts that add up to {}", counts.iter().sum::<usize>());
                pyo3::exceptions::PyRuntimeError::new_err(text)
            })
        });
        self.done(got)
    }
}
