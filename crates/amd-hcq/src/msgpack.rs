//! A MessagePack reader for the code object's `NT_AMDGPU_METADATA` note: enough of
//! the format for the metadata (maps, arrays, strings, integers, booleans, floats,
//! nil, binary), bounds-checked, depth-limited, never panicking.

use std::collections::BTreeMap;

/// A decoded MessagePack value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// nil
    Nil,
    /// true / false
    Bool(bool),
    /// Any integer (negative ones included).
    Int(i128),
    /// float32 / float64
    Float(f64),
    /// A string (invalid UTF-8 is replaced).
    Str(String),
    /// Binary data.
    Bin(Vec<u8>),
    /// An array.
    Array(Vec<Value>),
    /// A map with string keys (other keys are stringified).
    Map(BTreeMap<String, Value>),
}

impl Value {
    /// The entry `key` of a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m.get(key),
            _ => None,
        }
    }
    /// As a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    /// As a non-negative integer that fits `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }
    /// As an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// Nesting deeper than this is refused.
const MAX_DEPTH: usize = 32;

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.b.len()).ok_or_else(|| {
            format!(
                "truncated at byte {} (needs {n} more, {} left)",
                self.pos,
                self.b.len() - self.pos
            )
        })?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn uint(&mut self, n: usize) -> Result<u64, String> {
        Ok(self.take(n)?.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64))
    }

    fn len(&mut self, n: usize) -> Result<usize, String> {
        let l = self.uint(n)? as usize;
        // A length cannot exceed what is left (each element takes at least a byte).
        if l > self.b.len() - self.pos {
            return Err(format!("length {l} at byte {} runs past the end", self.pos));
        }
        Ok(l)
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("nested too deeply".into());
        }
        let t = self.take(1)?[0];
        Ok(match t {
            0x00..=0x7f => Value::Int(t as i128),
            0x80..=0x8f => self.map((t & 0x0f) as usize, depth)?,
            0x90..=0x9f => self.array((t & 0x0f) as usize, depth)?,
            0xa0..=0xbf => self.str((t & 0x1f) as usize)?,
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.len(1 << (t - 0xc4))?;
                Value::Bin(self.take(n)?.to_vec())
            }
            0xca => Value::Float(f32::from_bits(self.uint(4)? as u32) as f64),
            0xcb => Value::Float(f64::from_bits(self.uint(8)?)),
            0xcc..=0xcf => Value::Int(self.uint(1 << (t - 0xcc))? as i128),
            0xd0..=0xd3 => {
                let n = 1 << (t - 0xd0);
                let u = self.uint(n)?;
                let shift = 64 - 8 * n as u32;
                Value::Int((((u << shift) as i64) >> shift) as i128)
            }
            0xd9..=0xdb => {
                let n = self.len(1 << (t - 0xd9))?;
                self.str(n)?
            }
            0xdc | 0xdd => {
                let n = self.len(if t == 0xdc { 2 } else { 4 })?;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.len(if t == 0xde { 2 } else { 4 })?;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int((t as i8) as i128),
            other => return Err(format!("unsupported type byte {other:#x} at byte {}", self.pos - 1)),
        })
    }

    fn str(&mut self, n: usize) -> Result<Value, String> {
        Ok(Value::Str(String::from_utf8_lossy(self.take(n)?).into_owned()))
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Value, String> {
        let mut v = Vec::with_capacity(n.min(1024));
        for _ in 0..n {
            v.push(self.value(depth + 1)?);
        }
        Ok(Value::Array(v))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value, String> {
        let mut m = BTreeMap::new();
        for _ in 0..n {
            let k = match self.value(depth + 1)? {
                Value::Str(s) => s,
                other => format!("{other:?}"),
            };
            let v = self.value(depth + 1)?;
            m.insert(k, v);
        }
        Ok(Value::Map(m))
    }
}

/// Decodes one value from the start of `bytes`.
pub fn decode(bytes: &[u8]) -> Result<Value, String> {
    Reader { b: bytes, pos: 0 }.value(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_maps_arrays_strings_ints() {
        // {"a": [1, -1, 300], "b": true, "c": "xy"}
        let b = [
            0x83, 0xa1, b'a', 0x93, 0x01, 0xff, 0xcd, 0x01, 0x2c, 0xa1, b'b', 0xc3, 0xa1, b'c', 0xa2, b'x', b'y',
        ];
        let v = decode(&b).unwrap();
        let a = v.get("a").unwrap().as_array().unwrap();
        assert_eq!(a, &[Value::Int(1), Value::Int(-1), Value::Int(300)]);
        assert_eq!(v.get("b"), Some(&Value::Bool(true)));
        assert_eq!(v.get("c").unwrap().as_str(), Some("xy"));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(decode(&[]).is_err());
        assert!(decode(&[0xdc, 0xff, 0xff]).is_err());
        assert!(decode(&[0xdb, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[0x91; 100]).is_err(), "depth limit");
        assert!(decode(&[0xc1]).is_err());
        for seed in 0..2000u32 {
            let mut x = seed.wrapping_mul(2654435761) | 1;
            let bytes: Vec<u8> = (0..64)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            let _ = decode(&bytes);
        }
    }
}
