//! A program linked with Parallax that recurses DEPTH calls deep, each call
//! a region, for tests of the readers' memory against call depth.
//!
//! Usage: recursion [DEPTH]
//!
//! The recursion runs on a thread whose stack is sized for it. Under
//! `parallax run`, the profile keeps paths up to `PARALLAX_MAX_DEPTH` deep
//! and `PARALLAX_PROFILE_NODES` paths (raise both past DEPTH for a profile
//! of the whole recursion); the trace records every call.

fn recurse(depth: u64) -> u64 {
    let _g = parallax::region!(Function, "recurse");
    if depth <= 1 {
        return 1;
    }
    std::hint::black_box(recurse(depth - 1)) + 1
}

fn main() {
    let depth: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    // A frame of an unoptimized build with its region guard takes a few
    // hundred bytes.
    let stack = depth as usize * 1024 + (1 << 20);
    let calls = std::thread::Builder::new()
        .name("recursion".into())
        .stack_size(stack)
        .spawn(move || recurse(depth))
        .expect("start the thread")
        .join()
        .expect("the recursion");
    println!("recursion {calls} calls deep");
}
