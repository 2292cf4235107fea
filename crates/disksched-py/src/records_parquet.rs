//! `records.parquet` written in Rust (the `parquet` crate), chunk by chunk, so
//! the process that runs `disksched run --out --records` never imports pyarrow
//! (about 50 MB resident on its own: issue 21's bound is 100 MB for the whole
//! process). The columns and their types are those of `Result.records()`:
//! pandas reads the file back as the same DataFrame (the Arrow schema is
//! stored in the file, so `class` comes back as the categorical).

use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, BooleanArray, DictionaryArray, Int8Array, RecordBatch, StringArray, UInt32Array, UInt64Array};
use arrow_schema::{DataType, Field, Schema};
use numpy::PyReadonlyArray1;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{WriterProperties, WriterVersion};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::fs::File;
use std::sync::Arc;

use crate::DiskschedError;

/// The record columns, in `records()`'s order, with their Arrow types.
const U64: &[&str] = &["seq", "lbn", "arrival_ns", "host_dispatched_ns", "issued_ns", "started_ns", "done_ns",
                       "seek_ns", "rotation_ns", "transfer_ns", "destage_wait_ns", "destage_ns"];
const U32: &[&str] = &["client", "blocks", "disk"];
const BOOL: &[&str] = &["is_write", "warmup"];
const ORDER: &[&str] = &["seq", "client", "lbn", "blocks", "disk", "class", "is_write", "arrival_ns",
                         "host_dispatched_ns", "issued_ns", "started_ns", "done_ns", "seek_ns", "rotation_ns",
                         "transfer_ns", "destage_wait_ns", "destage_ns", "warmup"];
/// Dictionary-encoded: the few-valued columns (the time columns' values are nearly all distinct,
/// and dictionaries there make the file larger).
const DICTIONARY: &[&str] = &["client", "blocks", "disk", "class"];

fn data_type(name: &str) -> DataType {
    if U64.contains(&name) {
        DataType::UInt64
    } else if U32.contains(&name) {
        DataType::UInt32
    } else if BOOL.contains(&name) {
        DataType::Boolean
    } else {
        DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
    }
}

/// A records.parquet being written: `write` a chunk of columns (a dict of
/// numpy arrays, as a record sink receives them) as one row group, then `close`.
#[pyclass(module = "disksched._core", unsendable)]
pub(crate) struct RecordsParquet {
    path: String,
    schema: Arc<Schema>,
    classes: Arc<StringArray>,
    writer: Option<ArrowWriter<File>>,
}

fn io_err(path: &str, e: impl std::fmt::Display) -> PyErr {
    DiskschedError::new_err(format!("{path}: cannot write records: {e}"))
}

fn column<'py, T: numpy::Element>(cols: &Bound<'py, PyDict>, name: &str) -> PyResult<PyReadonlyArray1<'py, T>> {
    let v = cols.get_item(name)?.ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name.to_string()))?;
    v.extract()
}

#[pymethods]
impl RecordsParquet {
    /// Create `path` with the records' schema; `provenance` (JSON text) is
    /// stored in the schema's metadata under `key`; `class_names` are the class
    /// column's categories, in code order.
    #[new]
    fn new(path: String, key: String, provenance: String, class_names: Vec<String>) -> PyResult<Self> {
        let fields: Vec<Field> = ORDER.iter().map(|&n| Field::new(n, data_type(n), false)).collect();
        let schema = Arc::new(Schema::new_with_metadata(fields, HashMap::from([(key, provenance)])));
        let mut props = WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_compression(Compression::SNAPPY)
            .set_dictionary_enabled(false);
        for &c in DICTIONARY {
            props = props.set_column_dictionary_enabled(c.into(), true);
        }
        let file = File::create(&path).map_err(|e| io_err(&path, e))?;
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props.build())).map_err(|e| io_err(&path, e))?;
        Ok(Self { path, schema, classes: Arc::new(StringArray::from(class_names)), writer: Some(writer) })
    }

    /// Append one chunk (every column of `records()`, equal lengths) as a row group.
    fn write(&mut self, cols: &Bound<'_, PyDict>) -> PyResult<()> {
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(ORDER.len());
        for &name in ORDER {
            let a: ArrayRef = if U64.contains(&name) {
                Arc::new(UInt64Array::from(column::<u64>(cols, name)?.as_slice()?.to_vec()))
            } else if U32.contains(&name) {
                Arc::new(UInt32Array::from(column::<u32>(cols, name)?.as_slice()?.to_vec()))
            } else if BOOL.contains(&name) {
                Arc::new(BooleanArray::from(column::<bool>(cols, name)?.as_slice()?.to_vec()))
            } else {
                let codes: Vec<i8> = column::<u8>(cols, name)?.as_slice()?.iter().map(|&c| c as i8).collect();
                let keys = Int8Array::from(codes);
                Arc::new(DictionaryArray::<Int8Type>::try_new(keys, self.classes.clone())
                    .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("records column class: {e}")))?)
            };
            arrays.push(a);
        }
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("records chunk: {e}")))?;
        let path = &self.path;
        let w = self.writer.as_mut().ok_or_else(|| io_err(path, "already closed"))?;
        w.write(&batch).map_err(|e| io_err(path, e))?;
        w.flush().map_err(|e| io_err(path, e)) // one row group per chunk
    }

    /// Write the footer and close the file (a file with no chunk holds the schema and no rows).
    fn close(&mut self) -> PyResult<()> {
        match self.writer.take() {
            Some(w) => w.close().map(drop).map_err(|e| io_err(&self.path, e)),
            None => Ok(()),
        }
    }
}
