//! A program linked with Parallax that names a thread and its regions
//! with whatever its arguments hold (escape sequences, newlines, text a
//! spreadsheet takes for a formula), for the tests of what reports, the
//! run database and exports make of such names.
//!
//! Usage: hostile_names THREAD_NAME REGION...
//!
//! An argument cannot hold a NUL: `\0` (a backslash and a zero) in one
//! stands for it.

fn main() {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().replace("\\0", "\0"))
        .collect();
    let Some((thread, regions)) = args.split_first() else {
        eprintln!("usage: hostile_names THREAD_NAME REGION...");
        std::process::exit(2);
    };
    let regions = regions.to_vec();
    let worker = parallax::spawn_named(Some(thread.clone()), move || {
        for (i, name) in regions.iter().enumerate() {
            let id = parallax::register_region(name, parallax::RegionKind::Function, "", 0);
            if parallax::enter(id) {
                // Each region takes longer than the one before, so that
                // every one shows in the reports' top rows.
                std::hint::black_box((0..(i as u64 + 1) * 200_000).sum::<u64>());
                parallax::leave();
            }
        }
    });
    worker.join().expect("worker");
}
