//! Every kernel computes the same thing at every instrumentation level,
//! whether the probes record or not.

use parallax::{Config, Mode};
use parallax_workloads::livermore::{Level, Scale, KERNELS};

fn checksums(scale: Scale) -> Vec<[u64; 3]> {
    KERNELS
        .iter()
        .map(|k| {
            let size = k.size(scale);
            Level::ALL.map(|level| {
                let o = k.run(size, level);
                assert_eq!(o.iterations, k.iterations(size));
                assert!(
                    o.checksum.is_finite(),
                    "kernel {} at {level:?}: checksum {}",
                    k.number,
                    o.checksum
                );
                o.checksum.to_bits()
            })
        })
        .collect()
}

#[test]
fn checksums_agree_across_levels_and_modes() {
    // Measurement off: the probes of `Full` are present but disabled.
    let off = checksums(Scale::Test);
    for (k, sums) in KERNELS.iter().zip(&off) {
        assert!(
            sums.iter().all(|&s| s == sums[0]),
            "kernel {} ({}): checksums differ across levels: {:?}",
            k.number,
            k.name,
            sums.map(f64::from_bits)
        );
    }

    // Tracing: the probes record, the results stay the same.
    let dir = std::env::temp_dir().join(format!("parallax-lfk-levels-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    parallax::init(Config::new(Mode::Trace, &dir)).unwrap();
    let traced = checksums(Scale::Test);
    assert!(parallax::finish().is_some());
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(off, traced);

    // Different kernels, different results (the checksums say something).
    let mut distinct: Vec<u64> = off.iter().map(|s| s[0]).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 24);
}

#[test]
fn iteration_counts_follow_the_loop_bounds() {
    use parallax_workloads::livermore::{kernel, Size};
    let at = |num: u32, n: usize| kernel(num).unwrap().iterations(Size { n, passes: 1 });
    // ICCG on n = 101 (Malony's fig. 3.12): 50 + 25 + 12 + 6 + 3 + 1.
    assert_eq!(at(2, 101), 97);
    // Banded equations on the LFK's 1001: k = 7, 504, 1001, j = 5..1001 by 5.
    assert_eq!(at(4, 1001), 3 * 200);
    assert_eq!(at(6, 101), 101 * 100 / 2);
    assert_eq!(at(8, 101), 2 * 100);
    assert_eq!(at(14, 1001), 3 * 1001);
    assert_eq!(at(15, 101), 6 * 100);
    // Planes switch at k = 75, 66, 57, 48.
    assert_eq!(at(16, 75), 75 + 66 + 57 + 48);
    assert_eq!(at(18, 101), 3 * 5 * 100);
    assert_eq!(at(19, 101), 2 * 101);
    assert_eq!(at(21, 101), 25 * 25 * 101);
    assert_eq!(at(23, 101), 5 * 100);
    let k1 = kernel(1).unwrap();
    assert_eq!(k1.iterations(Size { n: 1001, passes: 3 }), 3003);
}

#[test]
fn bench_sizes_stay_finite() {
    // Thousands of passes over the same arrays: the data must keep every
    // kernel's values finite (a kernel that diverged would also run at
    // the speed of infinities and NaNs, not of its arithmetic).
    for k in &KERNELS {
        let o = k.run(k.size(Scale::Bench), Level::None);
        assert!(
            o.checksum.is_finite(),
            "kernel {}: {}",
            k.number,
            o.checksum
        );
    }
}
