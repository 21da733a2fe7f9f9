//! A results table as Arrow arrays through the Arrow C data interface
//! (<https://arrow.apache.org/docs/format/CDataInterface.html>): a struct array of the table's
//! columns, each its own child: `uint64` (`L`), `float64` (`g`), `bool` (`b`, bit-packed), or
//! `utf8` (`u`); a column with missing values carries a validity bitmap and is marked nullable.
//! Any Arrow implementation imports it (pyarrow's `RecordBatch._import_from_c`, arrow-rs'
//! `from_ffi`, nanoarrow). The consumer owns what it received and calls each struct's `release`
//! once; releasing the parent releases its children.

use std::ffi::{c_char, CString};
use std::ptr;

use fabricsim_core::stats::{Column, Table};

/// The Arrow C data interface's schema (its layout is the specification's).
#[repr(C)]
pub struct ArrowSchema {
    pub format: *const c_char,
    pub name: *const c_char,
    pub metadata: *const c_char,
    pub flags: i64,
    pub n_children: i64,
    pub children: *mut *mut ArrowSchema,
    pub dictionary: *mut ArrowSchema,
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    pub private_data: *mut std::ffi::c_void,
}

/// The Arrow C data interface's array (its layout is the specification's).
#[repr(C)]
pub struct ArrowArray {
    pub length: i64,
    pub null_count: i64,
    pub offset: i64,
    pub n_buffers: i64,
    pub n_children: i64,
    pub buffers: *mut *const std::ffi::c_void,
    pub children: *mut *mut ArrowArray,
    pub dictionary: *mut ArrowArray,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    pub private_data: *mut std::ffi::c_void,
}

/// `ARROW_FLAG_NULLABLE`.
const NULLABLE: i64 = 2;

/// What a schema owns: its strings and its children.
struct SchemaData {
    _format: CString,
    _name: CString,
    children: Vec<*mut ArrowSchema>,
    _pointers: Box<[*mut ArrowSchema]>,
}

/// What an array owns: its buffers (as 8-byte words, so that every buffer is aligned for its
/// values), the pointers to them, and its children.
struct ArrayData {
    _buffers: Vec<Vec<u64>>,
    _pointers: Box<[*const std::ffi::c_void]>,
    children: Box<[*mut ArrowArray]>,
}

unsafe extern "C" fn release_schema(s: *mut ArrowSchema) {
    // SAFETY: called by the consumer once on a schema this module made (its private data is a
    // boxed SchemaData; its children were made here too)
    unsafe {
        let Some(schema) = s.as_mut() else { return };
        let data = Box::from_raw(schema.private_data as *mut SchemaData);
        for &c in &data.children {
            if let Some(release) = (*c).release {
                release(c);
            }
            drop(Box::from_raw(c));
        }
        drop(data);
        schema.release = None;
    }
}

unsafe extern "C" fn release_array(a: *mut ArrowArray) {
    // SAFETY: as release_schema, for arrays
    unsafe {
        let Some(array) = a.as_mut() else { return };
        let data = Box::from_raw(array.private_data as *mut ArrayData);
        for &c in data.children.iter() {
            if let Some(release) = (*c).release {
                release(c);
            }
            drop(Box::from_raw(c));
        }
        drop(data);
        array.release = None;
    }
}

fn schema(format: &str, name: &str, flags: i64, children: Vec<*mut ArrowSchema>) -> ArrowSchema {
    let (format, name) = (CString::new(format).unwrap_or_default(), CString::new(name).unwrap_or_default());
    let mut pointers = children.clone().into_boxed_slice();
    let (f, n, c) = (format.as_ptr(), name.as_ptr(), pointers.as_mut_ptr());
    let count = children.len() as i64;
    let data = Box::new(SchemaData { _format: format, _name: name, children, _pointers: pointers });
    ArrowSchema {
        format: f,
        name: n,
        metadata: ptr::null(),
        flags,
        n_children: count,
        children: if count == 0 { ptr::null_mut() } else { c },
        dictionary: ptr::null_mut(),
        release: Some(release_schema),
        private_data: Box::into_raw(data) as *mut std::ffi::c_void,
    }
}

/// An array of `length` rows over `buffers` (`None`: an absent buffer, a validity bitmap with
/// no nulls), `null_count` nulls, and `children`.
fn array(length: usize, null_count: usize, buffers: Vec<Option<Vec<u8>>>, children: Vec<*mut ArrowArray>) -> ArrowArray {
    let mut pointers: Vec<*const std::ffi::c_void> = Vec::new();
    let mut owned = Vec::new();
    for b in buffers {
        match b {
            Some(v) => {
                let words: Vec<u64> =
                    v.chunks(8).map(|c| c.iter().rev().fold(0u64, |w, &b| (w << 8) | u64::from(b))).chain(std::iter::once(0)).collect();
                pointers.push(words.as_ptr() as *const std::ffi::c_void);
                owned.push(words);
            }
            None => pointers.push(ptr::null()),
        }
    }
    let mut pointers = pointers.into_boxed_slice();
    let mut children = children.into_boxed_slice();
    let (n_buffers, n_children) = (pointers.len() as i64, children.len() as i64);
    let (b, c) = (pointers.as_mut_ptr(), children.as_mut_ptr());
    let data = Box::new(ArrayData { _buffers: owned, _pointers: pointers, children });
    ArrowArray {
        length: length as i64,
        null_count: null_count as i64,
        offset: 0,
        n_buffers,
        n_children,
        buffers: b,
        children: if n_children == 0 { ptr::null_mut() } else { c },
        dictionary: ptr::null_mut(),
        release: Some(release_array),
        private_data: Box::into_raw(data) as *mut std::ffi::c_void,
    }
}

fn bits(values: impl Iterator<Item = bool>, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n.div_ceil(8).max(1)];
    for (i, v) in values.enumerate() {
        if v {
            out[i / 8] |= 1 << (i % 8);
        }
    }
    out
}

fn bytes<T: Copy>(values: &[T], to: impl Fn(T) -> [u8; 8]) -> Vec<u8> {
    values.iter().flat_map(|&v| to(v)).collect()
}

/// A string column's (offsets, data) buffers, or `None` past Arrow's 32-bit offsets.
fn utf8<'a>(values: impl Iterator<Item = &'a str>) -> Option<(Vec<u8>, Vec<u8>)> {
    let (mut offsets, mut data) = (vec![0u8; 4], Vec::new());
    for v in values {
        data.extend_from_slice(v.as_bytes());
        offsets.extend_from_slice(&i32::try_from(data.len()).ok()?.to_le_bytes());
    }
    Some((offsets, data))
}

/// One column as (format, flags, array).
fn column(c: &Column) -> Result<(&'static str, i64, ArrowArray), String> {
    let n = c.len();
    let validity = |valid: &[bool]| {
        let nulls = valid.iter().filter(|v| !**v).count();
        (nulls, (nulls > 0).then(|| bits(valid.iter().copied(), n)))
    };
    Ok(match c {
        Column::U64(v) => ("L", 0, array(n, 0, vec![None, Some(bytes(v, u64::to_le_bytes))], vec![])),
        Column::F64(v) => ("g", 0, array(n, 0, vec![None, Some(bytes(v, f64::to_le_bytes))], vec![])),
        Column::Bool(v) => ("b", 0, array(n, 0, vec![None, Some(bits(v.iter().copied(), n))], vec![])),
        Column::Str(v) => {
            let (o, d) = utf8(v.iter().map(String::as_str)).ok_or("a string column past 2 GiB")?;
            ("u", 0, array(n, 0, vec![None, Some(o), Some(d)], vec![]))
        }
        Column::Labels(l) => {
            let (o, d) = utf8((0..n).map(|i| l.get(i))).ok_or("a string column past 2 GiB")?;
            ("u", 0, array(n, 0, vec![None, Some(o), Some(d)], vec![]))
        }
        Column::OptU64(x) => {
            let (nulls, valid) = validity(&x.valid);
            ("L", NULLABLE, array(n, nulls, vec![valid, Some(bytes(&x.values, u64::to_le_bytes))], vec![]))
        }
        Column::OptF64(x) => {
            let (nulls, valid) = validity(&x.valid);
            ("g", NULLABLE, array(n, nulls, vec![valid, Some(bytes(&x.values, f64::to_le_bytes))], vec![]))
        }
    })
}

/// `table` as a struct array (`+s`) of its columns, and its schema.
pub fn export(table: &Table) -> Result<(ArrowSchema, ArrowArray), String> {
    let rows = table.columns.first().map_or(0, |(_, c)| c.len());
    let (mut schemas, mut arrays) = (Vec::new(), Vec::new());
    for (name, c) in &table.columns {
        let (format, flags, a) = column(c)?;
        schemas.push(Box::into_raw(Box::new(schema(format, name, flags, vec![]))));
        arrays.push(Box::into_raw(Box::new(a)));
    }
    Ok((schema("+s", "", 0, schemas), array(rows, 0, vec![None], arrays)))
}
