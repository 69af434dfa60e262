//! Arbitrary bytes as a profile block, and as a whole profile file (`.pxp`)
//! read through the block reader. Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use parallax_model::file::{parse_header, BlockReader, FileKind, HEADER_LEN};
use parallax_model::profile::CallTree;

fuzz_target!(|data: &[u8]| {
    if let Ok(tree) = CallTree::decode(data) {
        for i in 0..tree.nodes.len() {
            let _ = tree.path(i);
        }
        let mut again = Vec::new();
        tree.encode(&mut again);
        // Bytes, not values, are compared: a NaN is not equal to itself.
        let mut twice = Vec::new();
        CallTree::decode(&again).unwrap().encode(&mut twice);
        assert_eq!(twice, again);
    }
    let _ = parse_header(FileKind::Profile, data);
    let body = data.get(HEADER_LEN..).unwrap_or(&[]);
    let mut blocks = BlockReader::new(body, HEADER_LEN as u64);
    while let Ok(Some(block)) = blocks.next_block() {
        let _ = CallTree::decode(block);
    }
});
