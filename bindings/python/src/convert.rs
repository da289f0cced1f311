//! JSON values <-> Python objects.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

/// How deeply a Python value may nest to become JSON. serde_json reads back at most 128 levels
/// (its recursion limit: a session reloaded from the store, a provider's request), and a value
/// sits a few levels inside the message that carries it, so 100 leaves room for that envelope.
/// Real data nests far less; the limit also bounds this converter's own recursion.
pub const MAX_DEPTH: usize = 100;

/// How deeply a JSON value may nest to become Python objects. Parsed JSON never exceeds 128
/// levels; this only stops a value built deeper in Rust from exhausting the stack.
const MAX_JSON_DEPTH: usize = 512;

/// Converts a JSON value into plain Python objects (dict, list, str, int, float, bool, None).
pub fn json_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    json_to_py_at(py, value, 0)
}

fn json_to_py_at<'py>(py: Python<'py>, value: &Value, depth: usize) -> PyResult<Bound<'py, PyAny>> {
    if depth > MAX_JSON_DEPTH && matches!(value, Value::Array(_) | Value::Object(_)) {
        return Err(PyTypeError::new_err(format!(
            "JSON value is nested deeper than {MAX_JSON_DEPTH} levels"
        )));
    }
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py_at(py, item, depth + 1)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, json_to_py_at(py, v, depth + 1)?)?;
            }
            dict.into_any()
        }
    })
}

/// Converts plain Python data (dict with str keys, list, tuple, str, int, float, bool, None)
/// into JSON. Anything else is a `TypeError` naming the type; so is a structure that contains
/// itself, or one nested deeper than [`MAX_DEPTH`] levels.
pub fn py_to_json(obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    py_to_json_in(obj, &mut Vec::new())
}

/// `path` holds the identities of the containers from the root down to `obj`: meeting one
/// of them again is a cycle, and its length is the depth.
fn py_to_json_in(obj: &Bound<'_, PyAny>, path: &mut Vec<usize>) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(PyTypeError::new_err("integer too large for JSON"));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Number::from_f64(f.value()).map(Value::Number).unwrap_or(Value::Null));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    let is_container =
        obj.is_instance_of::<PyDict>() || obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>();
    if !is_container {
        return Err(PyTypeError::new_err(format!(
            "value of type {} is not JSON-serializable",
            type_name(obj)
        )));
    }
    // The object's address is its identity while it is alive, and everything on the path is.
    let id = obj.as_ptr() as usize;
    if path.contains(&id) {
        return Err(PyTypeError::new_err(format!(
            "cannot convert a cyclic structure to JSON: a {} contains itself",
            type_name(obj)
        )));
    }
    if path.len() >= MAX_DEPTH {
        return Err(PyTypeError::new_err(format!(
            "cannot convert to JSON: the value is nested deeper than {MAX_DEPTH} levels"
        )));
    }
    path.push(id);
    let value = container_to_json(obj, path);
    path.pop();
    value
}

fn container_to_json(obj: &Bound<'_, PyAny>, path: &mut Vec<usize>) -> PyResult<Value> {
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        // A snapshot of the items: a key's `__str__` may change the dict while we walk it.
        for item in d.items().iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let key = match k.cast::<PyString>() {
                Ok(s) => s.to_cow()?.into_owned(),
                Err(_) => k.str()?.to_cow()?.into_owned(),
            };
            map.insert(key, py_to_json_in(&v, path)?);
        }
        return Ok(Value::Object(map));
    }
    let items = match obj.cast::<PyList>() {
        Ok(l) => l.iter().map(|v| py_to_json_in(&v, path)).collect::<PyResult<Vec<_>>>(),
        Err(_) => obj
            .cast::<PyTuple>()?
            .iter()
            .map(|v| py_to_json_in(&v, path))
            .collect::<PyResult<Vec<_>>>(),
    };
    items.map(Value::Array)
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// A JSON value handed to Python as plain objects when a future resolves.
pub struct Json(pub Value);

impl<'py> IntoPyObject<'py> for Json {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        json_to_py(py, &self.0)
    }
}

/// Bytes handed to Python as `bytes`.
pub struct Bytes(pub Vec<u8>);

impl<'py> IntoPyObject<'py> for Bytes {
    type Target = pyo3::types::PyBytes;
    type Output = Bound<'py, pyo3::types::PyBytes>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(pyo3::types::PyBytes::new(py, &self.0))
    }
}

/// Serializes any serde value to JSON (infallible for the core's types; errors become `null`).
pub fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Reads an options type (one of `api/options.json`) from a Python dict in the options format:
/// the dict becomes JSON, its keys whose value is None are dropped, in nested objects too (None
/// means "the default"; arrays, such as a step's tool calls and their arguments, are kept as
/// they are), and serde reads the rest. A mistake (an unknown key, a value of the wrong type) is
/// a `ConfigError` carrying serde's message, prefixed with `what`; an unknown key's message
/// names it and lists the known ones. No dict (None) reads as an empty one.
pub fn options<T: serde::de::DeserializeOwned>(what: &str, dict: Option<&Bound<'_, PyAny>>) -> PyResult<T> {
    from_options(what, options_json(dict)?)
}

/// The JSON of an options dict, without its None-valued keys (see [`options`]).
pub fn options_json(dict: Option<&Bound<'_, PyAny>>) -> PyResult<Value> {
    let mut value = match dict {
        Some(d) => py_to_json(d)?,
        None => Value::Object(Map::new()),
    };
    drop_null_keys(&mut value);
    Ok(value)
}

/// Removes the null-valued keys of an object and of the objects in it (not inside arrays).
/// The depth is bounded by [`MAX_DEPTH`], as the value came from [`py_to_json`].
fn drop_null_keys(value: &mut Value) {
    if let Value::Object(map) = value {
        map.retain(|_, v| !v.is_null());
        map.values_mut().for_each(drop_null_keys);
    }
}

/// Reads an options type from JSON already taken from Python (see [`options`]).
pub fn from_options<T: serde::de::DeserializeOwned>(what: &str, value: Value) -> PyResult<T> {
    serde_json::from_value(value).map_err(|e| crate::errors::config_error(format!("invalid {what}: {e}")))
}
