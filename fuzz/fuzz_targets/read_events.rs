//! Arbitrary bytes as a whole event file (`.pxe`): the header check, the
//! block reader over the rest, and the record decoder on every block after
//! its 24-byte prefix. Nothing may panic; every failure must be an `Error`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use parallax_model::evcodec::decode_records;
use parallax_model::experiment::EVENT_BLOCK_PREFIX;
use parallax_model::file::{parse_header, BlockReader, FileKind, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    // The header is checked as a reader would, but the blocks are read
    // whatever it says, so that inputs without a valid header still reach
    // the block and record decoders.
    let _ = parse_header(FileKind::Events, data);
    let body = data.get(HEADER_LEN..).unwrap_or(&[]);
    let mut blocks = BlockReader::new(body, HEADER_LEN as u64);
    let mut stack = Vec::new();
    while let Ok(Some(block)) = blocks.next_block() {
        let Some(base) = block.get(..8) else { continue };
        let mut time = u64::from_le_bytes(base.try_into().unwrap());
        let records = block.get(EVENT_BLOCK_PREFIX..).unwrap_or(&[]);
        let mut last = time;
        let _ = decode_records(records, &mut time, &mut stack, |e| {
            // Times within a location never go backwards.
            assert!(e.time >= last, "time went backwards");
            last = e.time;
        });
    }
    // The raw bytes as records too: the checksum keeps most mutations out of
    // the decoder above.
    let mut time = 0;
    let _ = decode_records(data, &mut time, &mut Vec::new(), |_| {});
});
