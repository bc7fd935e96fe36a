//! The native half of the `quince` Python package: an embedded `Db` whose `execute` runs
//! any command and returns Python values. The redis-py-style `Redis` class is in Python
//! (`python/quince/__init__.py`). The GIL is released while the engine works or a
//! blocking command waits.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PySet, PyTuple};

create_exception!(_quince, ResponseError, PyException, "A command's error reply (Redis's text).");

/// An embedded dataset (in memory, or durable in a directory).
#[pyclass(frozen)]
struct Db {
    db: quince::Db,
}

fn error(e: quince::Error) -> PyErr {
    ResponseError::new_err(e.to_string())
}

/// A command's arguments from Python: bytes, str (UTF-8), int or float, as redis-py
/// encodes them.
fn arguments(args: &Bound<'_, PyTuple>) -> PyResult<Vec<Vec<u8>>> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args.iter() {
        if let Ok(b) = arg.downcast::<PyBytes>() {
            out.push(b.as_bytes().to_vec());
        } else if let Ok(s) = arg.extract::<String>() {
            out.push(s.into_bytes());
        } else if arg.is_instance_of::<pyo3::types::PyBool>() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "Invalid input of type: 'bool'. Convert to a bytes, string, int or float first.",
            ));
        } else if let Ok(i) = arg.extract::<i64>() {
            out.push(i.to_string().into_bytes());
        } else if let Ok(f) = arg.extract::<f64>() {
            out.push(format!("{}", f).into_bytes());
        } else {
            let kind = arg.get_type().name()?.to_string();
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "Invalid input of type: '{kind}'. Convert to a bytes, string, int or float first."
            )));
        }
    }
    Ok(out)
}

/// A reply as Python values: bulk strings as bytes, status replies as str, integers,
/// floats, None, lists, dicts, sets, booleans; an error inside an array (EXEC's) as a
/// ResponseError instance in place.
fn to_python(py: Python<'_>, value: quince::Value) -> PyResult<PyObject> {
    use quince::Value as V;
    Ok(match value {
        V::Simple(s) => s.into_pyobject(py)?.into_any().unbind(),
        V::Error(e) => ResponseError::new_err(e).into_value(py).into_any(),
        V::Integer(n) => n.into_pyobject(py)?.into_any().unbind(),
        V::Bulk(b) | V::Verbatim(_, b) => PyBytes::new(py, &b).into_any().unbind(),
        V::Null => py.None(),
        V::Array(items) | V::Push(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any().unbind()
        }
        V::Set(items) => {
            let set = PySet::empty(py)?;
            for item in items {
                set.add(to_python(py, item)?)?;
            }
            set.into_any().unbind()
        }
        V::Map(pairs) | V::Attribute(pairs) => {
            let dict = PyDict::new(py);
            for (k, v) in pairs {
                dict.set_item(to_python(py, k)?, to_python(py, v)?)?;
            }
            dict.into_any().unbind()
        }
        V::Double(d) => d.into_pyobject(py)?.into_any().unbind(),
        V::Boolean(b) => pyo3::types::PyBool::new(py, b).to_owned().into_any().unbind(),
        V::BigNumber(s) => py.import("builtins")?.getattr("int")?.call1((s,))?.unbind(),
    })
}

#[pymethods]
impl Db {
    /// A new, empty dataset in memory.
    #[staticmethod]
    fn memory() -> Db {
        Db { db: quince::Db::memory() }
    }

    /// Opens (or creates) a durable dataset in `path` (quince-server's directory layout).
    /// `fsync`: "always", "everysec" (default) or "no".
    #[staticmethod]
    #[pyo3(signature = (path, fsync = "everysec"))]
    fn open(py: Python<'_>, path: std::path::PathBuf, fsync: &str) -> PyResult<Db> {
        let fsync = match fsync {
            "always" => quince::Fsync::Always,
            "everysec" => quince::Fsync::EverySec,
            "no" => quince::Fsync::No,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "fsync must be 'always', 'everysec' or 'no', not {other:?}"
                )))
            }
        };
        let options = quince::Options { fsync, ..quince::Options::default() };
        let db = py.allow_threads(|| quince::Db::open_with(path, options)).map_err(error)?;
        Ok(Db { db })
    }

    /// A handle on database `index` of the same dataset (SELECT's number).
    fn select(&self, index: usize) -> PyResult<Db> {
        Ok(Db { db: self.db.select(index).map_err(error)? })
    }

    /// A subscriber with no subscription yet.
    fn subscription(&self) -> Subscription {
        Subscription { inner: self.db.subscription() }
    }

    /// Runs a command: `db.execute("SET", "k", "v")`.
    #[pyo3(signature = (*args))]
    fn execute(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<PyObject> {
        let args = arguments(args)?;
        let db = self.db.clone();
        let reply = py.allow_threads(move || db.command(&args)).map_err(error)?;
        to_python(py, reply)
    }

    /// Runs the commands (each a tuple of arguments) as one MULTI/EXEC transaction and
    /// returns their replies; a command error is a ResponseError in its place.
    fn transaction(&self, py: Python<'_>, commands: Vec<Bound<'_, PyTuple>>) -> PyResult<PyObject> {
        let commands: Vec<Vec<Vec<u8>>> = commands.iter().map(arguments).collect::<PyResult<_>>()?;
        let db = self.db.clone();
        let replies = py
            .allow_threads(move || {
                db.transaction(|tx| {
                    for command in &commands {
                        tx.cmd(command);
                    }
                })
            })
            .map_err(error)?;
        to_python(py, quince::Value::Array(replies))
    }
}

/// A subscriber (redis-py's PubSub is built on it in Python).
#[pyclass]
struct Subscription {
    inner: quince::Subscription,
}

#[pymethods]
impl Subscription {
    #[pyo3(signature = (*channels))]
    fn subscribe(&mut self, channels: &Bound<'_, PyTuple>) -> PyResult<()> {
        self.inner.subscribe(&arguments(channels)?).map_err(error)
    }

    #[pyo3(signature = (*patterns))]
    fn psubscribe(&mut self, patterns: &Bound<'_, PyTuple>) -> PyResult<()> {
        self.inner.psubscribe(&arguments(patterns)?).map_err(error)
    }

    #[pyo3(signature = (*channels))]
    fn unsubscribe(&mut self, channels: &Bound<'_, PyTuple>) -> PyResult<()> {
        self.inner.unsubscribe(&arguments(channels)?).map_err(error)
    }

    #[pyo3(signature = (*patterns))]
    fn punsubscribe(&mut self, patterns: &Bound<'_, PyTuple>) -> PyResult<()> {
        self.inner.punsubscribe(&arguments(patterns)?).map_err(error)
    }

    /// The next message as (pattern or None, channel, data), waiting up to `timeout`
    /// seconds (None: without limit); None when the time ran out.
    #[pyo3(signature = (timeout = None))]
    fn next_message(&mut self, py: Python<'_>, timeout: Option<f64>) -> PyResult<PyObject> {
        let timeout = timeout.map(|t| std::time::Duration::from_secs_f64(t.max(0.0)));
        let inner = &mut self.inner;
        let message = py.allow_threads(|| inner.next_message(timeout)).map_err(error)?;
        Ok(match message {
            None => py.None(),
            Some(m) => {
                let pattern: PyObject = match m.pattern {
                    Some(p) => PyBytes::new(py, &p).into_any().unbind(),
                    None => py.None(),
                };
                let channel = PyBytes::new(py, &m.channel).into_any().unbind();
                let data = PyBytes::new(py, &m.payload).into_any().unbind();
                PyTuple::new(py, [pattern, channel, data])?.into_any().unbind()
            }
        })
    }
}

#[pymodule]
fn _quince(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Db>()?;
    m.add_class::<Subscription>()?;
    m.add("ResponseError", m.py().get_type::<ResponseError>())?;
    // The job queue's FUNCTION library, shared with the Rust crate (quince.queue loads it).
    m.add("QUEUE_LIBRARY", include_str!("../../../crates/queue/lua/quince_queue.lua"))?;
    Ok(())
}
