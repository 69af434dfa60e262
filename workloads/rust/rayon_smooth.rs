//! A Rust program using rayon, measured with the `parallax` crate: a grid
//! is smoothed step after step, its rows spread over rayon's pool
//! (`smooth`, balanced by work stealing); the main thread checks the
//! change after each step (`residual`) and hands the result to a writer
//! thread (`write_snapshot`), which does little.
//!
//! Usage: rayon_smooth [ROWS] [STEPS] [POOL THREADS]

use std::sync::mpsc;

use rayon::prelude::*;

const COLS: usize = 512;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rows: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(256);
    let steps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(40);
    let pool: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2);
    rayon::ThreadPoolBuilder::new()
        .num_threads(pool)
        .build_global()
        .expect("one global pool");
    let (tx, rx) = mpsc::channel::<Vec<f64>>();
    let writer = std::thread::Builder::new()
        .name("writer".into())
        .spawn(move || {
            let mut sum = 0.0;
            for snapshot in rx {
                sum += write_snapshot(&snapshot);
            }
            sum
        })
        .expect("start the writer");
    let mut grid: Vec<f64> = (0..rows * COLS).map(|i| (i % 97) as f64).collect();
    let mut next = vec![0.0; rows * COLS];
    let mut change = 0.0;
    for step in 0..steps {
        next.par_chunks_mut(COLS)
            .enumerate()
            .for_each(|(r, out)| smooth(&grid, rows, r, out));
        change = residual(&grid, &next);
        std::mem::swap(&mut grid, &mut next);
        if step + 1 == steps {
            tx.send(grid.clone()).expect("the writer runs");
        }
    }
    drop(tx);
    let written = writer.join().expect("the writer ends");
    println!("change {change:.6} written {written:.3}");
}

/// One row of the next grid: each cell the mean of its neighbourhood,
/// a few times over (enough work per row to measure).
#[parallax::instrument]
fn smooth(grid: &[f64], rows: usize, r: usize, out: &mut [f64]) {
    let at = |r: usize, c: usize| grid[r.min(rows - 1) * COLS + c.min(COLS - 1)];
    for (c, cell) in out.iter_mut().enumerate() {
        let mut v = 0.0;
        for _ in 0..8 {
            v = (at(r.saturating_sub(1), c)
                + at(r + 1, c)
                + at(r, c.saturating_sub(1))
                + at(r, c + 1)
                + 4.0 * at(r, c)
                + v * 1e-9)
                / 8.0;
        }
        *cell = v;
    }
}

/// The largest change of a cell in this step.
#[parallax::instrument]
fn residual(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Stands for writing a snapshot out: a checksum.
#[parallax::instrument]
fn write_snapshot(s: &[f64]) -> f64 {
    s.iter().step_by(7).sum::<f64>() * 1e-6
}
