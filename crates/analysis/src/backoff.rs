//! Waiting for another member of an analysis (an MPI request, a pool's
//! barrier) without taking the processor from it.

/// Waits until `done()`: spinning at first (most waits between the members
/// of a replay are short), then yielding, then sleeping, so that a waiter
/// does not take the processor from the member it waits for when they
/// share one.
pub(crate) fn wait_until(mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        let waited = start.elapsed().as_micros();
        if waited < 50 {
            std::hint::spin_loop();
        } else if waited < 1_000 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}
