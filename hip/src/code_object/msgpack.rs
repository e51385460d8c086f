//! Just enough MessagePack to read the AMDGPU metadata note (code object v3 and later): maps, arrays,
//! strings, integers, booleans, floats. Every read is bounds-checked; nesting is limited.

/// A decoded value. Floats and binary blobs are kept only as markers: the metadata readers need neither.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Nil,
    Bool(bool),
    Int(i128),
    Float,
    Str(String),
    Bin,
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
}

impl Value {
    /// The value under string key `key` of a map.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> &[Value] {
        match self {
            Value::Array(a) => a,
            _ => &[],
        }
    }
}

const MAX_DEPTH: u32 = 32;

/// Decode one value from the start of `b`.
pub(crate) fn decode(b: &[u8]) -> Result<Value, String> {
    let mut r = Reader { b, at: 0 };
    r.value(0)
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| format!("metadata truncated at byte {}", self.at))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn uint(&mut self, n: usize) -> Result<u64, String> {
        Ok(self.take(n)?.iter().fold(0u64, |v, &x| (v << 8) | x as u64))
    }

    fn int(&mut self, n: usize) -> Result<i128, String> {
        let u = self.uint(n)?;
        let shift = 64 - 8 * n as u32;
        Ok((((u << shift) as i64) >> shift) as i128)
    }

    fn str(&mut self, n: usize) -> Result<Value, String> {
        let s = self.take(n)?;
        Ok(Value::Str(String::from_utf8_lossy(s).into_owned()))
    }

    fn array(&mut self, n: usize, depth: u32) -> Result<Value, String> {
        // Each element takes at least one byte: a count past the remaining bytes is malformed.
        if n > self.b.len() - self.at {
            return Err(format!("metadata array of {n} elements past the end"));
        }
        (0..n)
            .map(|_| self.value(depth + 1))
            .collect::<Result<_, _>>()
            .map(Value::Array)
    }

    fn map(&mut self, n: usize, depth: u32) -> Result<Value, String> {
        if n > (self.b.len() - self.at) / 2 {
            return Err(format!("metadata map of {n} entries past the end"));
        }
        let mut m = Vec::with_capacity(n);
        for _ in 0..n {
            let k = self.value(depth + 1)?;
            let v = self.value(depth + 1)?;
            m.push((k, v));
        }
        Ok(Value::Map(m))
    }

    fn value(&mut self, depth: u32) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err("metadata nested too deeply".into());
        }
        let tag = self.take(1)?[0];
        Ok(match tag {
            0x00..=0x7f => Value::Int(tag as i128),
            0x80..=0x8f => self.map((tag & 0x0f) as usize, depth)?,
            0x90..=0x9f => self.array((tag & 0x0f) as usize, depth)?,
            0xa0..=0xbf => self.str((tag & 0x1f) as usize)?,
            0xc0 => Value::Nil,
            0xc2 => Value::Bool(false),
            0xc3 => Value::Bool(true),
            0xc4..=0xc6 => {
                let n = self.uint(1 << (tag - 0xc4))? as usize;
                self.take(n)?;
                Value::Bin
            }
            0xca => {
                self.take(4)?;
                Value::Float
            }
            0xcb => {
                self.take(8)?;
                Value::Float
            }
            0xcc..=0xcf => Value::Int(self.uint(1 << (tag - 0xcc))? as i128),
            0xd0..=0xd3 => Value::Int(self.int(1 << (tag - 0xd0))?),
            0xd9..=0xdb => {
                let n = self.uint(1 << (tag - 0xd9))? as usize;
                self.str(n)?
            }
            0xdc | 0xdd => {
                let n = self.uint(if tag == 0xdc { 2 } else { 4 })? as usize;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.uint(if tag == 0xde { 2 } else { 4 })? as usize;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int((tag as i8) as i128),
            other => {
                return Err(format!(
                    "metadata uses MessagePack type 0x{other:02x}, not expected here"
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_maps_arrays_strings_and_integers() {
        // {"a": [1, -2, 300], "bb": true}
        let b = [
            0x82, 0xa1, b'a', 0x93, 0x01, 0xfe, 0xcd, 0x01, 0x2c, 0xa2, b'b', b'b', 0xc3,
        ];
        let v = decode(&b).unwrap();
        let a = v.get("a").unwrap().as_array();
        assert_eq!(a, [Value::Int(1), Value::Int(-2), Value::Int(300)]);
        assert_eq!(v.get("bb"), Some(&Value::Bool(true)));
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let b = [
            0x82, 0xa1, b'a', 0x93, 0x01, 0xfe, 0xcd, 0x01, 0x2c, 0xa2, b'b', b'b', 0xc3,
        ];
        for n in 0..b.len() {
            assert!(decode(&b[..n]).is_err(), "{n} bytes");
        }
        // A huge declared length is refused without allocating for it.
        assert!(decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode(&[0x91; 100]).unwrap_err().contains("deeply"));
    }
}
