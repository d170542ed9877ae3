//! Reads the tensors of a `.safetensors` file: an 8-byte little-endian header length, a JSON
//! header naming each tensor's dtype, shape and byte range, then the raw data. Only `F32` is
//! needed (the sentence encoder ships in full precision).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use super::super::{RetrieveError, le_f32s};

#[derive(Debug, Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<usize>,
    data_offsets: [usize; 2],
}

/// One tensor: its shape and values, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f32>,
}

/// Every `F32` tensor of the file, by name; other dtypes (integer position buffers) are skipped.
pub fn read(path: &Path) -> Result<HashMap<String, Tensor>, RetrieveError> {
    let bytes = std::fs::read(path).map_err(|e| RetrieveError::io(path, e))?;
    parse(&bytes).map_err(|e| RetrieveError::BadInput(format!("{}: {e}", path.display())))
}

pub fn parse(bytes: &[u8]) -> Result<HashMap<String, Tensor>, String> {
    let head: [u8; 8] = bytes
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .ok_or("shorter than its 8-byte header length")?;
    let len = u64::from_le_bytes(head) as usize;
    let header = bytes
        .get(8..8usize.saturating_add(len))
        .ok_or("header length runs past the end of the file")?;
    let entries: HashMap<String, serde_json::Value> =
        serde_json::from_slice(header).map_err(|e| format!("header is not JSON: {e}"))?;
    let data = &bytes[8 + len..];
    let mut out = HashMap::new();
    for (name, value) in entries {
        if name == "__metadata__" {
            continue;
        }
        let e: Entry =
            serde_json::from_value(value).map_err(|err| format!("tensor {name}: {err}"))?;
        if e.dtype != "F32" {
            continue;
        }
        let [start, end] = e.data_offsets;
        let raw = data
            .get(start..end)
            .filter(|_| start <= end)
            .ok_or_else(|| format!("tensor {name}: bytes {start}..{end} are outside the file"))?;
        let bytes_needed = e
            .shape
            .iter()
            .try_fold(4usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| format!("tensor {name}: shape {:?} is too large", e.shape))?;
        if raw.len() != bytes_needed {
            return Err(format!(
                "tensor {name}: shape {:?} needs {bytes_needed} bytes, has {}",
                e.shape,
                raw.len()
            ));
        }
        out.insert(
            name,
            Tensor {
                shape: e.shape,
                data: le_f32s(raw),
            },
        );
    }
    Ok(out)
}

/// Writes tensors in the same format (tests build small models with it).
#[cfg(test)]
pub fn write(tensors: &[(&str, &Tensor)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut offset = 0;
    for (name, t) in tensors {
        let size = t.data.len() * 4;
        header.insert(
            name.to_string(),
            serde_json::json!({"dtype": "F32", "shape": t.shape, "data_offsets": [offset, offset + size]}),
        );
        offset += size;
    }
    let header = serde_json::Value::Object(header).to_string();
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend(header.as_bytes());
    for (_, t) in tensors {
        for x in &t.data {
            out.extend(x.to_le_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_broken_files() {
        let t = Tensor {
            shape: vec![2, 3],
            data: vec![1.0, -2.0, 3.5, 0.0, 1e-3, 7.0],
        };
        let bytes = write(&[("w", &t)]);
        assert_eq!(parse(&bytes).unwrap()["w"], t);
        assert!(parse(&bytes[..4]).unwrap_err().contains("header"));
        assert!(
            parse(&bytes[..bytes.len() - 4])
                .unwrap_err()
                .contains("outside")
        );
        let mut bad = bytes.clone();
        bad[0] = 0xff;
        assert!(parse(&bad).is_err());
        let huge = Tensor {
            shape: vec![usize::MAX, 2],
            data: vec![],
        };
        assert!(
            parse(&write(&[("h", &huge)]))
                .unwrap_err()
                .contains("too large")
        );
    }
}
