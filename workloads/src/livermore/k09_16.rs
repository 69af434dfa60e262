//! Kernels 9 to 16.
//!
//! Arrays are 0-based (Fortran `A(i)` is `a[i - 1]`) except where the
//! Fortran indexes with computed integers (kernels 14 and 16): there the
//! arrays keep an unused element 0 and Fortran's 1-based indices.

use std::hint::black_box;

use super::data::{bits, fill, sum};
use super::{Blocks, Lfk, Size};

/// Kernel 9, integrate predictors, k = 1..n:
/// `PX(1,k) = DM28*PX(13,k) + DM27*PX(12,k) + DM26*PX(11,k) + DM25*PX(10,k)
/// + DM24*PX(9,k) + DM23*PX(8,k) + DM22*PX(7,k) + C0*(PX(5,k) + PX(6,k))
/// + PX(3,k)`.
pub(crate) struct K09 {
    n: usize,
    passes: usize,
    /// DM22 ... DM28.
    dm: [f64; 7],
    c0: f64,
    /// `PX(i,k)` at `px[(k-1) * 25 + i-1]`.
    px: Vec<f64>,
}

impl Lfk for K09 {
    fn new(s: Size) -> Self {
        K09 {
            n: s.n,
            passes: s.passes,
            dm: [0.22, 0.23, 0.24, 0.25, 0.26, 0.27, 0.28],
            c0: 0.5,
            px: fill(s.n * 25, 901, 0.0, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let [dm22, dm23, dm24, dm25, dm26, dm27, dm28] = self.dm;
        let c0 = self.c0;
        let px = &mut self.px;
        for _ in 0..self.passes {
            for k in 0..self.n {
                body!(blk, "lfk09 body");
                let p = black_box(k) * 25;
                px[p] = dm28 * px[p + 12]
                    + dm27 * px[p + 11]
                    + dm26 * px[p + 10]
                    + dm25 * px[p + 9]
                    + dm24 * px[p + 8]
                    + dm23 * px[p + 7]
                    + dm22 * px[p + 6]
                    + c0 * (px[p + 4] + px[p + 5])
                    + px[p + 2];
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.px)
    }
}

/// Kernel 10, difference predictors, k = 1..n: starting from
/// `AR = CX(5,k)`, each of `PX(5,k) ... PX(13,k)` is replaced by the
/// running difference that reached it, and `PX(14,k)` gets the last.
pub(crate) struct K10 {
    n: usize,
    passes: usize,
    /// `PX(i,k)` at `px[(k-1) * 25 + i-1]`; `CX` likewise.
    px: Vec<f64>,
    cx: Vec<f64>,
}

impl Lfk for K10 {
    fn new(s: Size) -> Self {
        K10 {
            n: s.n,
            passes: s.passes,
            px: fill(s.n * 25, 1001, 0.0, 1.0),
            cx: fill(s.n * 25, 1002, 0.0, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (px, cx) = (&mut self.px, &self.cx);
        for _ in 0..self.passes {
            for k in 0..self.n {
                body!(blk, "lfk10 body");
                let p = black_box(k) * 25;
                let mut ar = cx[p + 4];
                let mut br = ar - px[p + 4];
                px[p + 4] = ar;
                let mut cr = br - px[p + 5];
                px[p + 5] = br;
                ar = cr - px[p + 6];
                px[p + 6] = cr;
                br = ar - px[p + 7];
                px[p + 7] = ar;
                cr = br - px[p + 8];
                px[p + 8] = br;
                ar = cr - px[p + 9];
                px[p + 9] = cr;
                br = ar - px[p + 10];
                px[p + 10] = ar;
                cr = br - px[p + 11];
                px[p + 11] = br;
                px[p + 13] = cr - px[p + 12];
                px[p + 12] = cr;
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.px)
    }
}

/// Kernel 11, first sum: `X(1) = Y(1)`, `X(k) = X(k-1) + Y(k)`, k = 2..n.
pub(crate) struct K11 {
    n: usize,
    passes: usize,
    x: Vec<f64>,
    y: Vec<f64>,
}

impl Lfk for K11 {
    fn new(s: Size) -> Self {
        K11 {
            n: s.n,
            passes: s.passes,
            x: vec![0.0; s.n],
            y: fill(s.n, 1101, -1.0, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (x, y) = (&mut self.x, &self.y);
        for _ in 0..self.passes {
            x[0] = y[0];
            for k in 1..self.n {
                body!(blk, "lfk11 body");
                let k = black_box(k);
                x[k] = x[k - 1] + y[k];
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.x)
    }
}

/// Kernel 12, first difference: `X(k) = Y(k+1) - Y(k)`, k = 1..n.
pub(crate) struct K12 {
    n: usize,
    passes: usize,
    x: Vec<f64>,
    y: Vec<f64>,
}

impl Lfk for K12 {
    fn new(s: Size) -> Self {
        K12 {
            n: s.n,
            passes: s.passes,
            x: vec![0.0; s.n],
            y: fill(s.n + 1, 1201, -1.0, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (x, y) = (&mut self.x, &self.y);
        for _ in 0..self.passes {
            for k in 0..self.n {
                body!(blk, "lfk12 body");
                let k = black_box(k);
                x[k] = y[k + 1] - y[k];
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.x)
    }
}

/// Kernel 13, 2-D particle in cell, k = 1..n: the particle's cell
/// `(i1, j1)` (its position modulo 64) gives velocity increments
/// `P(3,k) += B(i1,j1)`, `P(4,k) += C(i1,j1)`; the particle moves by its
/// velocity and by `Y(i2+32)`, `Z(j2+32)` of its new cell `(i2, j2)`, and
/// `H(i2 + E(i2+32), j2 + F(j2+32))` counts it. `MOD2N(i, 64)` is
/// `i AND 63`, as the LFK allows on binary machines.
pub(crate) struct K13 {
    n: usize,
    passes: usize,
    /// `P(i,k)` at `p[(k-1) * 4 + i-1]`.
    p: Vec<f64>,
    /// 64 x 64, cell `(i, j)` (0-based) at `[j * 64 + i]`.
    b: Vec<f64>,
    c: Vec<f64>,
    h: Vec<f64>,
    /// 96 entries, read at `i + 32` for a cell coordinate `i` in 0..64.
    y: Vec<f64>,
    z: Vec<f64>,
    e: Vec<i64>,
    f: Vec<i64>,
}

/// Offsets that keep `i + e[i + 32]` in 0..64.
fn k13_offsets(seed: u64) -> Vec<i64> {
    (0..96)
        .map(|i| match i as i64 - 32 {
            0 => 1,
            63 => -1,
            c if (0..64).contains(&c) => (bits(seed, i) % 3) as i64 - 1,
            _ => 0,
        })
        .collect()
}

impl Lfk for K13 {
    fn new(s: Size) -> Self {
        let n = s.n;
        let mut p = vec![0.0; n * 4];
        for k in 0..n {
            p[k * 4] = 64.0 * data_unit(1301, k);
            p[k * 4 + 1] = 64.0 * data_unit(1302, k);
            p[k * 4 + 2] = 2.0 * data_unit(1303, k) - 1.0;
            p[k * 4 + 3] = 2.0 * data_unit(1304, k) - 1.0;
        }
        K13 {
            n,
            passes: s.passes,
            p,
            b: fill(64 * 64, 1305, -0.5, 0.5),
            c: fill(64 * 64, 1306, -0.5, 0.5),
            h: vec![0.0; 64 * 64],
            y: fill(96, 1307, -1.0, 1.0),
            z: fill(96, 1308, -1.0, 1.0),
            e: k13_offsets(1309),
            f: k13_offsets(1310),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (p, b, c, h) = (&mut self.p, &self.b, &self.c, &mut self.h);
        let (y, z, e, f) = (&self.y, &self.z, &self.e, &self.f);
        for _ in 0..self.passes {
            for k in 0..self.n {
                body!(blk, "lfk13 body");
                let q = black_box(k) * 4;
                let i1 = (p[q] as i64 & 63) as usize;
                let j1 = (p[q + 1] as i64 & 63) as usize;
                p[q + 2] += b[j1 * 64 + i1];
                p[q + 3] += c[j1 * 64 + i1];
                p[q] += p[q + 2];
                p[q + 1] += p[q + 3];
                let i2 = (p[q] as i64 & 63) as usize;
                let j2 = (p[q + 1] as i64 & 63) as usize;
                p[q] += y[i2 + 32];
                p[q + 1] += z[j2 + 32];
                let i2 = (i2 as i64 + e[i2 + 32]) as usize;
                let j2 = (j2 as i64 + f[j2 + 32]) as usize;
                h[j2 * 64 + i2] += 1.0;
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.p) + sum(&self.h)
    }
}

fn data_unit(seed: u64, i: usize) -> f64 {
    super::data::unit(seed, i as u64)
}

/// Kernel 14, 1-D particle in cell, three loops over k = 1..n: gather the
/// field at each particle's grid cell `IX(k) = INT(GRD(k))`; push the
/// particle (`VX`, `XX`) and find its new cell `IR(k)` (modulo 2048) and
/// offset `RX(k)`; deposit `1 - RX(k)` and `RX(k)` on the cell and the
/// next one of `RH`.
pub(crate) struct K14 {
    n: usize,
    passes: usize,
    flx: f64,
    grd: Vec<f64>,
    /// 1-based: `EX(i)` at `ex[i]`.
    ex: Vec<f64>,
    dex: Vec<f64>,
    ix: Vec<i64>,
    xi: Vec<f64>,
    ex1: Vec<f64>,
    dex1: Vec<f64>,
    vx: Vec<f64>,
    xx: Vec<f64>,
    ir: Vec<i64>,
    rx: Vec<f64>,
    /// 1-based, 2049 cells.
    rh: Vec<f64>,
}

impl Lfk for K14 {
    fn new(s: Size) -> Self {
        let n = s.n;
        K14 {
            n,
            passes: s.passes,
            flx: 0.001,
            grd: fill(n, 1401, 1.0, n as f64 + 1.0),
            ex: fill(n + 1, 1402, 0.0, 2.0),
            dex: fill(n + 1, 1403, 0.0, 0.01),
            ix: vec![0; n],
            xi: vec![0.0; n],
            ex1: vec![0.0; n],
            dex1: vec![0.0; n],
            vx: vec![0.0; n],
            xx: vec![0.0; n],
            ir: vec![0; n],
            rx: vec![0.0; n],
            rh: vec![0.0; 2050],
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let flx = self.flx;
        let (grd, ex, dex) = (&self.grd, &self.ex, &self.dex);
        let (ix, xi, ex1, dex1) = (&mut self.ix, &mut self.xi, &mut self.ex1, &mut self.dex1);
        let (vx, xx, ir, rx, rh) = (
            &mut self.vx,
            &mut self.xx,
            &mut self.ir,
            &mut self.rx,
            &mut self.rh,
        );
        for _ in 0..self.passes {
            for k in 0..self.n {
                body!(blk, "lfk14 body 1");
                let k = black_box(k);
                vx[k] = 0.0;
                xx[k] = 0.0;
                ix[k] = grd[k] as i64;
                xi[k] = ix[k] as f64;
                ex1[k] = ex[ix[k] as usize];
                dex1[k] = dex[ix[k] as usize];
            }
            for k in 0..self.n {
                body!(blk, "lfk14 body 2");
                let k = black_box(k);
                vx[k] = vx[k] + ex1[k] + (xx[k] - xi[k]) * dex1[k];
                xx[k] = xx[k] + vx[k] + flx;
                ir[k] = xx[k] as i64;
                rx[k] = xx[k] - ir[k] as f64;
                ir[k] = (ir[k] & 2047) + 1;
                xx[k] = rx[k] + ir[k] as f64;
            }
            for k in 0..self.n {
                body!(blk, "lfk14 body 3");
                let k = black_box(k);
                let i = ir[k] as usize;
                rh[i] = rh[i] + 1.0 - rx[k];
                rh[i + 1] += rx[k];
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.rh) + sum(&self.xx) + sum(&self.vx)
    }
}

/// Kernel 15, casual Fortran: for j = 2..7 and k = 2..n, `VY(k,j)` and
/// `VS(k,j)` from the larger of two neighbouring `VH` or `VG` values, the
/// smaller-or-equal `VF` neighbour deciding which (see the branches below;
/// the labels are the Fortran's).
pub(crate) struct K15 {
    nz: usize,
    passes: usize,
    /// 7 columns of `nz`: `VH(k,j)` at `vh[(j-1) * nz + k-1]`.
    vh: Vec<f64>,
    vf: Vec<f64>,
    vg: Vec<f64>,
    vy: Vec<f64>,
    vs: Vec<f64>,
}

const K15_NG: usize = 7;

impl Lfk for K15 {
    fn new(s: Size) -> Self {
        let len = K15_NG * s.n;
        K15 {
            nz: s.n,
            passes: s.passes,
            vh: fill(len, 1501, 0.1, 1.0),
            vf: fill(len, 1502, 0.5, 1.5),
            vg: fill(len, 1503, 0.1, 1.0),
            vy: vec![0.0; len],
            vs: vec![0.0; len],
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (ng, nz) = (K15_NG, self.nz);
        let (ar, br) = (0.053, 0.073);
        let (vh, vf, vg) = (&self.vh, &self.vf, &self.vg);
        let (vy, vs) = (&mut self.vy, &mut self.vs);
        for _ in 0..self.passes {
            // Fortran j = 2..NG and k = 2..NZ, here j - 1 and k - 1.
            for j in 1..ng {
                for k in 1..nz {
                    body!(blk, "lfk15 body");
                    let k = black_box(k);
                    let at = |j: usize, k: usize| j * nz + k;
                    if j + 1 >= ng {
                        // 30
                        vy[at(j, k)] = 0.0;
                        continue;
                    }
                    // 31, 32, 33
                    let t = if vh[at(j + 1, k)] - vh[at(j, k)] > 0.0 {
                        ar
                    } else {
                        br
                    };
                    // 34, 35, 36
                    let (r, s) = if vf[at(j, k)] - vf[at(j, k - 1)] < 0.0 {
                        (vh[at(j, k - 1)].max(vh[at(j + 1, k - 1)]), vf[at(j, k - 1)])
                    } else {
                        (vh[at(j, k)].max(vh[at(j + 1, k)]), vf[at(j, k)])
                    };
                    // 37
                    let g = vg[at(j, k)];
                    vy[at(j, k)] = (g * g + r * r).sqrt() * t / s;
                    if k + 1 >= nz {
                        // 39
                        vs[at(j, k)] = 0.0;
                        continue;
                    }
                    // 40, 41, 42
                    let (r, s, t) = if vf[at(j, k)] - vf[at(j - 1, k)] < 0.0 {
                        (
                            vg[at(j - 1, k)].max(vg[at(j - 1, k + 1)]),
                            vf[at(j - 1, k)],
                            br,
                        )
                    } else {
                        (vg[at(j, k)].max(vg[at(j, k + 1)]), vf[at(j, k)], ar)
                    };
                    // 43
                    let h = vh[at(j, k)];
                    vs[at(j, k)] = (h * h + r * r).sqrt() * t / s;
                }
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.vy) + sum(&self.vs)
    }
}

/// Kernel 16, Monte Carlo search loop: walks the zones `ZONE(j4)` of plane
/// `m` (k = 1..n, `j4 = 2n(m-1) + 1 + 2k`); each zone number `j5` is
/// tested against `PLAN(j5)` (one of three thresholds R, S, T by range of
/// `j5`) or, for `j5 > n`, against a polynomial in `D(j5-4 .. j5)`; the
/// sign of that test and of `ZONE(j4-1)` decide whether to go on, switch
/// to the next plane (and stop when back at the first), or stop. `k2`
/// counts the zones tested, `k3` the polynomial tests.
///
/// The LFK's data is not reproduced; ours is laid out so that plane `m`
/// switches at `k = n - (m-1) * (n/8)` and the walk stops on the switch
/// from the last of 4 planes, so the number of zones tested is known.
pub(crate) struct K16 {
    n: usize,
    passes: usize,
    r: f64,
    s: f64,
    t: f64,
    /// 1-based; `ZONE(1)` is the number of planes.
    zone: Vec<i32>,
    /// 1-based.
    plan: Vec<f64>,
    d: Vec<f64>,
    k2: u64,
    k3: u64,
    m: i64,
}

const K16_PLANES: usize = 4;
/// Zone numbers above n go up to n + this.
const K16_EXTRA: usize = 16;

/// The `k` at which plane `m` (1-based) switches to the next one.
fn k16_switch_at(n: usize, m: usize) -> usize {
    n - (m - 1) * (n / 8)
}

/// Zones tested in one pass of kernel 16.
pub(crate) fn k16_per_pass(n: usize) -> u64 {
    (1..=K16_PLANES).map(|m| k16_switch_at(n, m) as u64).sum()
}

fn sq(x: f64) -> f64 {
    x * x
}

impl Lfk for K16 {
    fn new(s: Size) -> Self {
        let n = s.n;
        let (r, s_, t) = (0.5, 0.35, 0.65);
        let plan = fill(n + K16_EXTRA + 1, 1601, 0.0, 1.0);
        let d = fill(n + K16_EXTRA + 1, 1602, 0.0, 1.0);
        let (ii, lb) = (n / 3, 2 * (n / 3));
        let mut zone = vec![0i32; 2 * n * K16_PLANES + 2];
        zone[1] = K16_PLANES as i32;
        for m in 1..=K16_PLANES {
            let j2 = 2 * n * (m - 1) + 1;
            for k in 1..=n {
                let j4 = j2 + 2 * k;
                let h = bits(1603, j4 as u64);
                let j5 = if h % 8 == 0 {
                    n + 1 + (h >> 3) as usize % K16_EXTRA
                } else {
                    1 + (h >> 3) as usize % (n - 1)
                };
                // The sign the kernel's test will find (see `run`).
                let diff = if j5 > n {
                    d[j5] - (d[j5 - 1] * sq(t - d[j5 - 2]) + sq(s_ - d[j5 - 3]) + sq(r - d[j5 - 4]))
                } else if j5 + lb < n {
                    plan[j5] - t
                } else if j5 + ii < n {
                    plan[j5] - s_
                } else {
                    plan[j5] - r
                };
                assert!(diff != 0.0, "kernel 16 data: a tie at zone {j4}");
                let switch = k == k16_switch_at(n, m);
                // Below (label 445) a negative flag goes on; above (440)
                // a positive one does.
                let on = if diff < 0.0 { -1 } else { 1 };
                let magnitude = 1 + (h >> 40) as i32 % 7;
                zone[j4 - 1] = if switch { -on } else { on } * magnitude;
                zone[j4] = j5 as i32;
            }
        }
        K16 {
            n,
            passes: s.passes,
            r,
            s: s_,
            t,
            zone,
            plan,
            d,
            k2: 0,
            k3: 0,
            m: 0,
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let n = self.n;
        let (r, s, t) = (self.r, self.s, self.t);
        let (zone, plan, d) = (&self.zone, &self.plan, &self.d);
        let ni = n as i64;
        let ii = ni / 3;
        let lb = ii + ii;
        let (mut k2, mut k3) = (self.k2, self.k3);
        let mut m: i64 = 1;
        for _ in 0..self.passes {
            m = 1;
            let i1 = m;
            // 410
            let mut j2 = 1;
            let mut k = 1;
            while k <= n {
                body!(blk, "lfk16 body");
                let kk = black_box(k);
                k2 += 1;
                let j4 = j2 + kk + kk;
                let j5 = zone[j4] as i64;
                let diff = if j5 < ni {
                    // 420, 415: the threshold by range of j5; 425, 430, 435
                    let threshold = if j5 - ni + lb < 0 {
                        t
                    } else if j5 - ni + ii < 0 {
                        s
                    } else {
                        r
                    };
                    plan[j5 as usize] - threshold
                } else if j5 == ni {
                    break; // 475
                } else {
                    // 450
                    k3 += 1;
                    let j = j5 as usize;
                    d[j] - (d[j - 1] * sq(t - d[j - 2]) + sq(s - d[j - 3]) + sq(r - d[j - 4]))
                };
                let flag = zone[j4 - 1];
                let next_plane = if diff < 0.0 {
                    // 445
                    match flag {
                        f if f < 0 => false,
                        0 => break, // 485
                        _ => true,
                    }
                } else if diff > 0.0 {
                    // 440
                    match flag {
                        f if f < 0 => true,
                        0 => break, // 485
                        _ => false,
                    }
                } else {
                    break; // 480
                };
                if next_plane {
                    // 455, 460, 465
                    m += 1;
                    if m > zone[1] as i64 {
                        m = 1;
                    }
                    if i1 == m {
                        break; // 480
                    }
                    // 410
                    j2 = (n + n) * (m as usize - 1) + 1;
                    k = 1;
                } else {
                    k += 1; // 470
                }
            }
        }
        self.k2 = k2;
        self.k3 = k3;
        self.m = m;
    }

    fn checksum(&self) -> f64 {
        self.k2 as f64 + self.k3 as f64 + self.m as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k16_walks_the_planned_path() {
        for n in [8, 75, 1000] {
            let mut k = K16::new(Size { n, passes: 3 });
            k.run(false);
            // Every zone tested is one iteration; the walk ends on the
            // switch back to the first plane.
            assert_eq!(k.k2, 3 * k16_per_pass(n), "n = {n}");
            assert_eq!(k.m, 1);
            if n >= 75 {
                assert!(k.k3 > 0 && k.k3 < k.k2 / 4, "k3 = {}", k.k3);
            }
        }
    }
}
