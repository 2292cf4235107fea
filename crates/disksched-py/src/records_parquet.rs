//! `records.parquet` written in Rust (the `parquet` crate's column writer),
//! chunk by chunk, so the process that runs `disksched run --out --records`
//! never imports pyarrow (about 50 MB resident on its own: issue 21's bound is
//! 100 MB for the whole process). The columns and their types are those of
//! `Result.records()`. The crate's Arrow layer is not built (it was half of a
//! fresh build's compile time, issue 35): the Arrow schema that readers use
//! to give `class` back as the categorical is stored as pyarrow serializes it
//! (`records_arrow_schema.b64`, made by `tools/records_arrow_schema.py`
//! from `records()` itself; tests/test_records.py checks it is current).

use numpy::PyReadonlyArray1;
use parquet::basic::Compression;
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::fs::File;
use std::sync::Arc;

use crate::DiskschedError;

/// The record columns in `records()`'s order, as Parquet types: unsigned
/// integers as Parquet's unsigned INT64 / INT32, `class` as a string.
const SCHEMA: &str = "message arrow_schema {
  required int64 seq (INTEGER(64, false));
  required int32 client (INTEGER(32, false));
  required int64 lbn (INTEGER(64, false));
  required int32 blocks (INTEGER(32, false));
  required int32 disk (INTEGER(32, false));
  required binary class (STRING);
  required boolean is_write;
  required int64 arrival_ns (INTEGER(64, false));
  required int64 host_dispatched_ns (INTEGER(64, false));
  required int64 issued_ns (INTEGER(64, false));
  required int64 started_ns (INTEGER(64, false));
  required int64 done_ns (INTEGER(64, false));
  required int64 seek_ns (INTEGER(64, false));
  required int64 rotation_ns (INTEGER(64, false));
  required int64 transfer_ns (INTEGER(64, false));
  required int64 destage_wait_ns (INTEGER(64, false));
  required int64 destage_ns (INTEGER(64, false));
  required boolean warmup;
}";
/// The same columns as Arrow types (base64 of the IPC-serialized schema, as
/// Arrow's Parquet writers store it under `ARROW:schema`).
const ARROW_SCHEMA_B64: &str = include_str!("records_arrow_schema.b64");
/// Dictionary-encoded: the few-valued columns (the time columns' values are nearly all distinct,
/// and dictionaries there make the file larger).
const DICTIONARY: &[&str] = &["client", "blocks", "disk", "class"];

/// A records.parquet being written: `write` a chunk of columns (a dict of
/// numpy arrays, as a record sink receives them) as one row group, then `close`.
#[pyclass(module = "disksched._core", unsendable)]
pub(crate) struct RecordsParquet {
    path: String,
    classes: Vec<ByteArray>,
    writer: Option<SerializedFileWriter<File>>,
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
    /// stored in the file's metadata under `key`; `class_names` are the class
    /// column's categories, in code order.
    #[new]
    fn new(path: String, key: String, provenance: String, class_names: Vec<String>) -> PyResult<Self> {
        let schema = Arc::new(parse_message_type(SCHEMA).map_err(|e| io_err(&path, e))?);
        let mut props = WriterProperties::builder()
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_compression(Compression::SNAPPY)
            .set_dictionary_enabled(false)
            .set_key_value_metadata(Some(vec![
                KeyValue::new("ARROW:schema".into(), ARROW_SCHEMA_B64.trim().to_string()),
                KeyValue::new(key, provenance),
            ]));
        for &c in DICTIONARY {
            props = props.set_column_dictionary_enabled(c.into(), true);
        }
        let file = File::create(&path).map_err(|e| io_err(&path, e))?;
        let writer = SerializedFileWriter::new(file, schema, Arc::new(props.build())).map_err(|e| io_err(&path, e))?;
        let classes = class_names.into_iter().map(|n| ByteArray::from(n.into_bytes())).collect();
        Ok(Self { path, classes, writer: Some(writer) })
    }

    /// Append one chunk (every column of `records()`, equal lengths) as a row group.
    fn write(&mut self, cols: &Bound<'_, PyDict>) -> PyResult<()> {
        let path = &self.path;
        let w = self.writer.as_mut().ok_or_else(|| io_err(path, "already closed"))?;
        let mut group = w.next_row_group().map_err(|e| io_err(path, e))?;
        while let Some(mut c) = group.next_column().map_err(|e| io_err(path, e))? {
            // Parquet keeps unsigned integers in its signed physical types, bit for bit.
            let written = match c.untyped() {
                ColumnWriter::Int64ColumnWriter(w) => {
                    let v: Vec<i64> = column::<u64>(cols, w.get_descriptor().name())?.as_slice()?.iter().map(|&x| x as i64).collect();
                    w.write_batch(&v, None, None)
                }
                ColumnWriter::Int32ColumnWriter(w) => {
                    let v: Vec<i32> = column::<u32>(cols, w.get_descriptor().name())?.as_slice()?.iter().map(|&x| x as i32).collect();
                    w.write_batch(&v, None, None)
                }
                ColumnWriter::BoolColumnWriter(w) => w.write_batch(column::<bool>(cols, w.get_descriptor().name())?.as_slice()?, None, None),
                ColumnWriter::ByteArrayColumnWriter(w) => {
                    let name = w.get_descriptor().name().to_string();
                    let v = column::<u8>(cols, &name)?.as_slice()?.iter().map(|&k| {
                        self.classes.get(k as usize).cloned().ok_or_else(|| {
                            pyo3::exceptions::PyValueError::new_err(format!("records column {name}: code {k} has no class name"))
                        })
                    }).collect::<PyResult<Vec<ByteArray>>>()?;
                    w.write_batch(&v, None, None)
                }
                _ => unreachable!("SCHEMA has only INT64, INT32, BOOLEAN and BYTE_ARRAY columns"),
            };
            written.map_err(|e| io_err(path, e))?;
            c.close().map_err(|e| io_err(path, e))?;
        }
        group.close().map(drop).map_err(|e| io_err(path, e))
    }

    /// Write the footer and close the file (a file with no chunk holds the schema and no rows).
    fn close(&mut self) -> PyResult<()> {
        match self.writer.take() {
            Some(w) => w.close().map(drop).map_err(|e| io_err(&self.path, e)),
            None => Ok(()),
        }
    }
}
