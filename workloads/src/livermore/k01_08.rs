//! Kernels 1 to 8.
//!
//! Arrays are 0-based; a Fortran element `A(i)` is `a[i - 1]`, and a
//! Fortran 2-D `A(i, j)` (column-major, `i` fastest) is `a[(j - 1) * rows
//! + i - 1]`. Each kernel's comment gives its Fortran statement.

use std::hint::black_box;

use super::data::{fill, sum};
use super::{Blocks, Lfk, Size};

/// Kernel 1, hydro fragment:
/// `X(k) = Q + Y(k) * (R * ZX(k+10) + T * ZX(k+11))`, k = 1..n.
pub(crate) struct K01 {
    n: usize,
    passes: usize,
    q: f64,
    r: f64,
    t: f64,
    x: Vec<f64>,
    y: Vec<f64>,
    zx: Vec<f64>,
}

impl Lfk for K01 {
    fn new(s: Size) -> Self {
        K01 {
            n: s.n,
            passes: s.passes,
            q: 0.5,
            r: 0.25,
            t: 0.125,
            x: vec![0.0; s.n],
            y: fill(s.n, 101, 0.1, 1.0),
            zx: fill(s.n + 11, 102, 0.1, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (q, r, t) = (self.q, self.r, self.t);
        let (x, y, zx) = (&mut self.x, &self.y, &self.zx);
        for _ in 0..self.passes {
            for k in 0..self.n {
                body!(blk, "lfk01 body");
                let k = black_box(k);
                x[k] = q + y[k] * (r * zx[k + 10] + t * zx[k + 11]);
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.x)
    }
}

/// Kernel 2, ICCG excerpt (incomplete Cholesky conjugate gradient), as in
/// Malony's fig. 3.12: halving levels `II = n, n/2, ...`; on each,
/// `X(i) = X(k) - V(k) * X(k-1) - V(k+1) * X(k+1)` for every second `k`
/// of the level, `i` running on from the level's end.
pub(crate) struct K02 {
    n: usize,
    passes: usize,
    x: Vec<f64>,
    v: Vec<f64>,
}

/// Inner iterations of one pass of kernel 2: `II/2` on each level.
pub(crate) fn k02_per_pass(n: usize) -> u64 {
    let (mut ii, mut count) = (n, 0);
    loop {
        count += ii / 2;
        ii /= 2;
        if ii <= 1 {
            return count as u64;
        }
    }
}

impl Lfk for K02 {
    fn new(s: Size) -> Self {
        K02 {
            n: s.n,
            passes: s.passes,
            x: fill(2 * s.n + 2, 201, 0.1, 1.0),
            v: fill(2 * s.n + 2, 202, 0.05, 0.45),
        }
    }

    // The counter runs beside the loop index as in the Fortran.
    #[allow(clippy::explicit_counter_loop)]
    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (x, v) = (&mut self.x, &self.v);
        for _ in 0..self.passes {
            let mut ii = self.n;
            let mut ipntp = 0;
            loop {
                let ipnt = ipntp;
                ipntp += ii;
                ii /= 2;
                // Fortran: I = IPNTP, then I = I + 1 before each store, so
                // the first store is X(IPNTP + 1), here x[ipntp].
                let mut i = ipntp;
                // Fortran K = IPNT+2, IPNTP, 2; here k = K - 1.
                for k in (ipnt + 1..ipntp).step_by(2) {
                    body!(blk, "lfk02 body");
                    let k = black_box(k);
                    x[i] = x[k] - v[k] * x[k - 1] - v[k + 1] * x[k + 1];
                    i += 1;
                }
                if ii <= 1 {
                    break;
                }
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.x)
    }
}

/// Kernel 3, inner product: `Q = Q + Z(k) * X(k)`, k = 1..n, from Q = 0.
pub(crate) struct K03 {
    n: usize,
    passes: usize,
    q: f64,
    x: Vec<f64>,
    z: Vec<f64>,
}

impl Lfk for K03 {
    fn new(s: Size) -> Self {
        K03 {
            n: s.n,
            passes: s.passes,
            q: 0.0,
            x: fill(s.n, 301, -1.0, 1.0),
            z: fill(s.n, 302, -1.0, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (x, z) = (&self.x, &self.z);
        for _ in 0..self.passes {
            let mut q = 0.0;
            for k in 0..self.n {
                body!(blk, "lfk03 body");
                let k = black_box(k);
                q += z[k] * x[k];
            }
            self.q = q;
        }
    }

    fn checksum(&self) -> f64 {
        self.q
    }
}

/// Kernel 4, banded linear equations. With `L` the array length (1001 in
/// the LFK, `n` here) and `m = (L - 7) / 2`: for k = 7, 7+m, ... <= L,
/// `temp = X(k-1) - sum over j = 5, 10, ... <= n of X(lw) * Y(j)` with
/// `lw` running from `k - 6`, then `X(k-1) = Y(5) * temp` (the LFK's `XZ`
/// is `X`).
pub(crate) struct K04 {
    n: usize,
    passes: usize,
    x: Vec<f64>,
    y: Vec<f64>,
}

/// Outer and inner iterations of one pass of kernel 4.
fn k04_loops(n: usize) -> (usize, usize) {
    let m = (n - 7) / 2;
    ((n - 7) / m + 1, n / 5)
}

/// Inner iterations of one pass of kernel 4.
pub(crate) fn k04_per_pass(n: usize) -> u64 {
    let (outer, inner) = k04_loops(n);
    (outer * inner) as u64
}

impl Lfk for K04 {
    fn new(s: Size) -> Self {
        K04 {
            n: s.n,
            passes: s.passes,
            x: fill(s.n + s.n / 5 + 1, 401, 0.0, 1.0),
            y: fill(s.n, 402, 0.0, 0.5),
        }
    }

    // The counter runs beside the loop index as in the Fortran.
    #[allow(clippy::explicit_counter_loop)]
    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let n = self.n;
        let m = (n - 7) / 2;
        let (x, y) = (&mut self.x, &self.y);
        for _ in 0..self.passes {
            // kk = k - 7 for the Fortran k: lw starts at kk, X(k-1) is x[kk+5].
            for kk in (0..=n - 7).step_by(m) {
                let mut lw = kk;
                let mut temp = x[kk + 5];
                // Fortran j = 5, 10, ..., here j - 1.
                for j in (4..n).step_by(5) {
                    body!(blk, "lfk04 body");
                    let j = black_box(j);
                    temp -= x[lw] * y[j];
                    lw += 1;
                }
                x[kk + 5] = y[4] * temp;
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.x)
    }
}

/// Kernel 5, tri-diagonal elimination below the diagonal:
/// `X(i) = Z(i) * (Y(i) - X(i-1))`, i = 2..n.
pub(crate) struct K05 {
    n: usize,
    passes: usize,
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
}

impl Lfk for K05 {
    fn new(s: Size) -> Self {
        K05 {
            n: s.n,
            passes: s.passes,
            x: fill(s.n, 501, 0.0, 1.0),
            y: fill(s.n, 502, 0.0, 1.0),
            z: fill(s.n, 503, 0.1, 0.9),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (x, y, z) = (&mut self.x, &self.y, &self.z);
        for _ in 0..self.passes {
            for i in 1..self.n {
                body!(blk, "lfk05 body");
                let i = black_box(i);
                x[i] = z[i] * (y[i] - x[i - 1]);
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.x)
    }
}

/// Kernel 6, general linear recurrence equations: for i = 2..n,
/// `W(i) = 0.01`, then `W(i) = W(i) + B(i,k) * W(i-k)` for k = 1..i-1.
pub(crate) struct K06 {
    n: usize,
    passes: usize,
    w: Vec<f64>,
    /// `B(i,k)` at `b[(k-1) * n + i - 1]`.
    b: Vec<f64>,
}

impl Lfk for K06 {
    fn new(s: Size) -> Self {
        let n = s.n;
        K06 {
            n,
            passes: s.passes,
            w: fill(n, 601, 0.0, 1.0),
            // Small enough that W grows by at most a factor e over n terms.
            b: fill(n * n, 602, 0.0, 1.0 / n as f64),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let n = self.n;
        let (w, b) = (&mut self.w, &self.b);
        for _ in 0..self.passes {
            for i in 1..n {
                w[i] = 0.01;
                for k in 0..i {
                    body!(blk, "lfk06 body");
                    let k = black_box(k);
                    w[i] += b[k * n + i] * w[i - k - 1];
                }
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.w)
    }
}

/// Kernel 7, equation of state fragment, k = 1..n:
/// `X(k) = U(k) + R*(Z(k) + R*Y(k)) + T*(U(k+3) + R*(U(k+2) + R*U(k+1))
/// + T*(U(k+6) + Q*(U(k+5) + Q*U(k+4))))`.
pub(crate) struct K07 {
    n: usize,
    passes: usize,
    q: f64,
    r: f64,
    t: f64,
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    u: Vec<f64>,
}

impl Lfk for K07 {
    fn new(s: Size) -> Self {
        K07 {
            n: s.n,
            passes: s.passes,
            q: 0.5,
            r: 0.25,
            t: 0.125,
            x: vec![0.0; s.n],
            y: fill(s.n, 701, 0.0, 1.0),
            z: fill(s.n, 702, 0.0, 1.0),
            u: fill(s.n + 6, 703, 0.0, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (q, r, t) = (self.q, self.r, self.t);
        let (x, y, z, u) = (&mut self.x, &self.y, &self.z, &self.u);
        for _ in 0..self.passes {
            for k in 0..self.n {
                body!(blk, "lfk07 body");
                let k = black_box(k);
                x[k] = u[k]
                    + r * (z[k] + r * y[k])
                    + t * (u[k + 3]
                        + r * (u[k + 2] + r * u[k + 1])
                        + t * (u[k + 6] + q * (u[k + 5] + q * u[k + 4])));
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.x)
    }
}

/// Kernel 8, ADI integration: for kx = 2, 3 and ky = 2..n, differences
/// `DUi(ky) = Ui(kx,ky+1,1) - Ui(kx,ky-1,1)` and, for i = 1..3,
/// `Ui(kx,ky,2) = Ui(kx,ky,1) + Ai1*DU1(ky) + Ai2*DU2(ky) + Ai3*DU3(ky)
/// + SIG*(Ui(kx+1,ky,1) - 2*Ui(kx,ky,1) + Ui(kx-1,ky,1))`.
pub(crate) struct K08 {
    n: usize,
    passes: usize,
    a: [[f64; 3]; 3],
    sig: f64,
    /// `Ui(kx,ky,nl)` at `ui[((nl-1) * (n+1) + ky-1) * 5 + kx-1]`.
    u1: Vec<f64>,
    u2: Vec<f64>,
    u3: Vec<f64>,
    du1: Vec<f64>,
    du2: Vec<f64>,
    du3: Vec<f64>,
}

impl Lfk for K08 {
    fn new(s: Size) -> Self {
        let len = 2 * (s.n + 1) * 5;
        K08 {
            n: s.n,
            passes: s.passes,
            a: [[0.11, 0.12, 0.13], [0.21, 0.22, 0.23], [0.31, 0.32, 0.33]],
            sig: 0.05,
            u1: fill(len, 801, 0.0, 1.0),
            u2: fill(len, 802, 0.0, 1.0),
            u3: fill(len, 803, 0.0, 1.0),
            du1: vec![0.0; s.n + 1],
            du2: vec![0.0; s.n + 1],
            du3: vec![0.0; s.n + 1],
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let n = self.n;
        let [[a11, a12, a13], [a21, a22, a23], [a31, a32, a33]] = self.a;
        let sig = self.sig;
        let fw = 2.0;
        let (u1, u2, u3) = (&mut self.u1, &mut self.u2, &mut self.u3);
        let (du1, du2, du3) = (&mut self.du1, &mut self.du2, &mut self.du3);
        // Planes nl1 = 1 and nl2 = 2 start at these offsets.
        let (p1, p2) = (0, (n + 1) * 5);
        for _ in 0..self.passes {
            for kx in 1..3 {
                for ky in 1..n {
                    body!(blk, "lfk08 body");
                    let ky = black_box(ky);
                    let at = |p: usize, x: usize, y: usize| p + y * 5 + x;
                    du1[ky] = u1[at(p1, kx, ky + 1)] - u1[at(p1, kx, ky - 1)];
                    du2[ky] = u2[at(p1, kx, ky + 1)] - u2[at(p1, kx, ky - 1)];
                    du3[ky] = u3[at(p1, kx, ky + 1)] - u3[at(p1, kx, ky - 1)];
                    u1[at(p2, kx, ky)] = u1[at(p1, kx, ky)]
                        + a11 * du1[ky]
                        + a12 * du2[ky]
                        + a13 * du3[ky]
                        + sig
                            * (u1[at(p1, kx + 1, ky)] - fw * u1[at(p1, kx, ky)]
                                + u1[at(p1, kx - 1, ky)]);
                    u2[at(p2, kx, ky)] = u2[at(p1, kx, ky)]
                        + a21 * du1[ky]
                        + a22 * du2[ky]
                        + a23 * du3[ky]
                        + sig
                            * (u2[at(p1, kx + 1, ky)] - fw * u2[at(p1, kx, ky)]
                                + u2[at(p1, kx - 1, ky)]);
                    u3[at(p2, kx, ky)] = u3[at(p1, kx, ky)]
                        + a31 * du1[ky]
                        + a32 * du2[ky]
                        + a33 * du3[ky]
                        + sig
                            * (u3[at(p1, kx + 1, ky)] - fw * u3[at(p1, kx, ky)]
                                + u3[at(p1, kx - 1, ky)]);
                }
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.u1) + sum(&self.u2) + sum(&self.u3)
    }
}
