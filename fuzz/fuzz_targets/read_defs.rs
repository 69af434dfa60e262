//! Arbitrary bytes as a definitions block, and as a whole definitions file
//! (`.pxd`) read through the block reader. Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use parallax_model::defs::Def;
use parallax_model::file::{parse_header, BlockReader, FileKind, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(defs) = Def::decode_all(data) {
        // What decodes must survive a round trip. Bytes are compared, not
        // values: a NaN is not equal to itself, and varints may be spelt
        // longer than needed in the input, so only the re-encoding is
        // canonical.
        let encode = |defs: &[Def]| {
            let mut out = Vec::new();
            for d in defs {
                d.encode(&mut out);
            }
            out
        };
        let again = encode(&defs);
        assert_eq!(encode(&Def::decode_all(&again).unwrap()), again);
    }
    let _ = parse_header(FileKind::Definitions, data);
    let body = data.get(HEADER_LEN..).unwrap_or(&[]);
    let mut blocks = BlockReader::new(body, HEADER_LEN as u64);
    while let Ok(Some(block)) = blocks.next_block() {
        let _ = Def::decode_all(block);
    }
});
