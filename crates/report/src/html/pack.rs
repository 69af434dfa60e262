//! Compact columns of integers for the page: each column varint-encoded
//! after the previous one, the whole gzip-compressed, then base64. The
//! page inflates them with the browser's own DecompressionStream, only
//! when a view needs them.

use std::io::Write as _;

use flate2::write::GzEncoder;
use flate2::Compression;

/// Columns of unsigned integers of equal length (values up to 2^53, which
/// the page decodes exactly).
#[derive(Clone, Debug, Default)]
pub struct Columns {
    cols: Vec<Vec<u64>>,
}

impl Columns {
    /// `n` empty columns.
    pub fn new(n: usize) -> Columns {
        Columns {
            cols: vec![Vec::new(); n],
        }
    }

    /// Appends one row.
    pub fn push(&mut self, row: &[u64]) {
        for (c, v) in self.cols.iter_mut().zip(row) {
            c.push(*v);
        }
    }

    /// Rows so far.
    pub fn len(&self) -> usize {
        self.cols.first().map_or(0, Vec::len)
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Encoded: varint row count and column count, then the columns.
    pub fn encode(&self) -> String {
        let mut raw = Vec::with_capacity(self.len() * self.cols.len() * 2 + 8);
        varint(&mut raw, self.len() as u64);
        varint(&mut raw, self.cols.len() as u64);
        for c in &self.cols {
            for &v in c {
                varint(&mut raw, v);
            }
        }
        base64(&gzip(&raw))
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn gzip(raw: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::new(6));
    // Writing into a Vec cannot fail.
    let _ = e.write_all(raw);
    e.finish().unwrap_or_default()
}

/// Standard base64 with padding.
pub fn base64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        s.push(A[(n >> 18) as usize & 63] as char);
        s.push(A[(n >> 12) as usize & 63] as char);
        s.push(if c.len() > 1 {
            A[(n >> 6) as usize & 63] as char
        } else {
            '='
        });
        s.push(if c.len() > 2 {
            A[n as usize & 63] as char
        } else {
            '='
        });
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn base64_known_values() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn columns_round_trip_through_gzip() {
        let mut c = Columns::new(2);
        c.push(&[1, 300]);
        c.push(&[(1 << 53) - 1, 0]);
        let s = c.encode();
        // Undo base64 and gzip here to check the layout.
        let mut bytes = Vec::new();
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let digits: Vec<u32> = s
            .bytes()
            .filter(|&b| b != b'=')
            .map(|b| alphabet.iter().position(|&a| a == b).unwrap() as u32)
            .collect();
        for q in digits.chunks(4) {
            let n = q
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, d)| n | d << (18 - 6 * i));
            for i in 0..q.len() - 1 {
                bytes.push((n >> (16 - 8 * i)) as u8);
            }
        }
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut raw)
            .unwrap();
        assert_eq!(&raw[..3], &[2, 2, 1]);
        assert_eq!(raw.len(), 2 + 1 + 8 + 2 + 1);
    }
}
