//! Kernels 17 to 24.
//!
//! Arrays are 0-based (Fortran `A(i)` is `a[i - 1]`, a 2-D `A(i,j)`
//! column-major, `i` fastest) except kernel 17's, which keep Fortran's
//! 1-based indices and an unused element 0.

use std::hint::black_box;

use super::data::{fill, sum};
use super::{Blocks, Lfk, Size};

/// Kernel 17, implicit conditional computation: k runs from n down to 2;
/// at each, `E3 = XNM*VLR(k) + VLIN(k)` and `XNC = SCALE*E3`; if `XNM` or
/// `VXNE(k)` exceeds `XNC` the step model applies (`E6 = XNM*VSP(k) +
/// VSTP(k)`), else the linear one (`E6 = 2*E3 - XNM`,
/// `VXNE(k) = 2*E3 - VXNE(k)`); `XNM = E6` carries on to the next k.
pub(crate) struct K17 {
    n: usize,
    passes: usize,
    /// 1-based.
    vsp: Vec<f64>,
    vstp: Vec<f64>,
    vxne: Vec<f64>,
    vxnd: Vec<f64>,
    ve3: Vec<f64>,
    vlr: Vec<f64>,
    vlin: Vec<f64>,
}

impl Lfk for K17 {
    fn new(s: Size) -> Self {
        let len = s.n + 1;
        K17 {
            n: s.n,
            passes: s.passes,
            vsp: fill(len, 1701, 0.1, 0.9),
            vstp: fill(len, 1702, 0.1, 1.0),
            vxne: fill(len, 1703, 0.0, 1.0),
            vxnd: vec![0.0; len],
            ve3: vec![0.0; len],
            vlr: fill(len, 1704, 0.1, 0.9),
            vlin: fill(len, 1705, 0.1, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (dw, fw, tw) = (5.0 / 3.0, 1.0 / 3.0, 1.03 / 3.07);
        let (vsp, vstp, vlr, vlin) = (&self.vsp, &self.vstp, &self.vlr, &self.vlin);
        let (vxne, vxnd, ve3) = (&mut self.vxne, &mut self.vxnd, &mut self.ve3);
        for _ in 0..self.passes {
            let mut k = self.n;
            let j = 1;
            let scale = dw;
            let mut xnm = fw;
            let mut e6 = tw;
            loop {
                body!(blk, "lfk17 body");
                let kk = black_box(k);
                // 61
                let e3 = xnm * vlr[kk] + vlin[kk];
                let xnei = vxne[kk];
                vxnd[kk] = e6;
                let xnc = scale * e3;
                if xnm > xnc || xnei > xnc {
                    // 60: step model
                    e6 = xnm * vsp[kk] + vstp[kk];
                    vxne[kk] = e6;
                    xnm = e6;
                    ve3[kk] = e6;
                } else {
                    // linear model
                    ve3[kk] = e3;
                    e6 = e3 + e3 - xnm;
                    vxne[kk] = e3 + e3 - xnei;
                    xnm = e6;
                }
                k -= 1;
                if k == j {
                    break; // 62
                }
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.vxne) + sum(&self.vxnd) + sum(&self.ve3)
    }
}

/// Kernel 18, 2-D explicit hydrodynamics fragment, three sweeps over
/// k = 2..6, j = 2..n: `ZA`, `ZB` from `ZP`, `ZQ`, `ZR`, `ZM`; then
/// `ZU += S * (...)`, `ZV += S * (...)` from `ZA`, `ZB` and the neighbours
/// of `ZZ`, `ZR`; then `ZR += T*ZU`, `ZZ += T*ZV`.
pub(crate) struct K18 {
    jn: usize,
    passes: usize,
    /// 7 columns of jn + 1: `ZA(j,k)` at `za[(k-1) * (jn+1) + j-1]`.
    za: Vec<f64>,
    zb: Vec<f64>,
    zp: Vec<f64>,
    zq: Vec<f64>,
    zr: Vec<f64>,
    zm: Vec<f64>,
    zu: Vec<f64>,
    zv: Vec<f64>,
    zz: Vec<f64>,
}

const K18_KN: usize = 6;

impl Lfk for K18 {
    fn new(s: Size) -> Self {
        let len = (K18_KN + 1) * (s.n + 1);
        // The fragment is not a stable scheme by itself (one mode of ZR +
        // ZZ grows, faster as ZA and ZB grow with ZR): small ZP and ZQ
        // differences keep ZA and ZB near 1e-4, so that growth stays below
        // a factor 2 over the thousands of passes of a run.
        K18 {
            jn: s.n,
            passes: s.passes,
            za: fill(len, 1801, 0.0, 1.0e-4),
            zb: fill(len, 1802, 0.0, 1.0e-4),
            zp: fill(len, 1803, 0.0, 1.0e-4),
            zq: fill(len, 1804, 0.0, 1.0e-4),
            zr: fill(len, 1805, 0.0, 1.0),
            zm: fill(len, 1806, 1.0, 2.0),
            zu: fill(len, 1807, -0.01, 0.01),
            zv: fill(len, 1808, -0.01, 0.01),
            zz: fill(len, 1809, 0.0, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (t, s) = (0.0037, 0.0041);
        let (kn, jn) = (K18_KN, self.jn);
        let w = jn + 1;
        let (za, zb, zu, zv) = (&mut self.za, &mut self.zb, &mut self.zu, &mut self.zv);
        let (zr, zz) = (&mut self.zr, &mut self.zz);
        let (zp, zq, zm) = (&self.zp, &self.zq, &self.zm);
        for _ in 0..self.passes {
            // Fortran k = 2..KN and j = 2..JN, here k - 1 and j - 1.
            for k in 1..kn {
                for j in 1..jn {
                    body!(blk, "lfk18 body 1");
                    let j = black_box(j);
                    let at = |k: usize, j: usize| k * w + j;
                    za[at(k, j)] = (zp[at(k + 1, j - 1)] + zq[at(k + 1, j - 1)]
                        - zp[at(k, j - 1)]
                        - zq[at(k, j - 1)])
                        * (zr[at(k, j)] + zr[at(k, j - 1)])
                        / (zm[at(k, j - 1)] + zm[at(k + 1, j - 1)]);
                    zb[at(k, j)] =
                        (zp[at(k, j - 1)] + zq[at(k, j - 1)] - zp[at(k, j)] - zq[at(k, j)])
                            * (zr[at(k, j)] + zr[at(k - 1, j)])
                            / (zm[at(k, j)] + zm[at(k, j - 1)]);
                }
            }
            for k in 1..kn {
                for j in 1..jn {
                    body!(blk, "lfk18 body 2");
                    let j = black_box(j);
                    let at = |k: usize, j: usize| k * w + j;
                    zu[at(k, j)] += s
                        * (za[at(k, j)] * (zz[at(k, j)] - zz[at(k, j + 1)])
                            - za[at(k, j - 1)] * (zz[at(k, j)] - zz[at(k, j - 1)])
                            - zb[at(k, j)] * (zz[at(k, j)] - zz[at(k - 1, j)])
                            + zb[at(k + 1, j)] * (zz[at(k, j)] - zz[at(k + 1, j)]));
                    zv[at(k, j)] += s
                        * (za[at(k, j)] * (zr[at(k, j)] - zr[at(k, j + 1)])
                            - za[at(k, j - 1)] * (zr[at(k, j)] - zr[at(k, j - 1)])
                            - zb[at(k, j)] * (zr[at(k, j)] - zr[at(k - 1, j)])
                            + zb[at(k + 1, j)] * (zr[at(k, j)] - zr[at(k + 1, j)]));
                }
            }
            for k in 1..kn {
                for j in 1..jn {
                    body!(blk, "lfk18 body 3");
                    let j = black_box(j);
                    let at = k * w + j;
                    zr[at] += t * zu[at];
                    zz[at] += t * zv[at];
                }
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.za) + sum(&self.zb) + sum(&self.zr) + sum(&self.zz)
    }
}

/// Kernel 19, general linear recurrence equations:
/// `B5(k) = SA(k) + STB5*SB(k)`, `STB5 = B5(k) - STB5` for k = 1..n, then
/// the same for k = n..1.
pub(crate) struct K19 {
    n: usize,
    passes: usize,
    stb5: f64,
    b5: Vec<f64>,
    sa: Vec<f64>,
    sb: Vec<f64>,
}

impl Lfk for K19 {
    fn new(s: Size) -> Self {
        K19 {
            n: s.n,
            passes: s.passes,
            stb5: 0.1,
            b5: vec![0.0; s.n],
            sa: fill(s.n, 1901, 0.0, 1.0),
            // |SB - 1| < 1/2 keeps STB5 bounded.
            sb: fill(s.n, 1902, 0.5, 1.5),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let n = self.n;
        let (b5, sa, sb) = (&mut self.b5, &self.sa, &self.sb);
        let mut stb5 = self.stb5;
        for _ in 0..self.passes {
            for k in 0..n {
                body!(blk, "lfk19 body 1");
                let k = black_box(k);
                b5[k] = sa[k] + stb5 * sb[k];
                stb5 = b5[k] - stb5;
            }
            for i in 1..=n {
                body!(blk, "lfk19 body 2");
                let k = n - black_box(i);
                b5[k] = sa[k] + stb5 * sb[k];
                stb5 = b5[k] - stb5;
            }
        }
        self.stb5 = stb5;
    }

    fn checksum(&self) -> f64 {
        sum(&self.b5) + self.stb5
    }
}

/// Kernel 20, discrete ordinates transport, a recurrence over k = 1..n:
/// `DI = Y(k) - G(k)/(XX(k) + DK)`, `DN = MAX(S, MIN(Z(k)/DI, T))` (0.2 if
/// `DI = 0`), `X(k) = ((W(k) + V(k)*DN)*XX(k) + U(k))/(VX(k) + V(k)*DN)`,
/// `XX(k+1) = (X(k) - XX(k))*DN + XX(k)`.
pub(crate) struct K20 {
    n: usize,
    passes: usize,
    s: f64,
    t: f64,
    dk: f64,
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    g: Vec<f64>,
    u: Vec<f64>,
    v: Vec<f64>,
    w: Vec<f64>,
    vx: Vec<f64>,
    xx: Vec<f64>,
}

impl Lfk for K20 {
    fn new(s: Size) -> Self {
        let n = s.n;
        K20 {
            n,
            passes: s.passes,
            s: 0.1,
            t: 0.9,
            dk: 1.0,
            x: vec![0.0; n],
            y: fill(n, 2001, 0.0, 1.0),
            z: fill(n, 2002, 0.0, 1.0),
            g: fill(n, 2003, 0.0, 1.0),
            u: fill(n, 2004, 0.0, 1.0),
            v: fill(n, 2005, 0.1, 1.0),
            // W < VX: X stays a contraction of XX.
            w: fill(n, 2006, 0.1, 0.5),
            vx: fill(n, 2007, 1.0, 2.0),
            xx: fill(n + 1, 2008, 0.5, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (s, t, dk) = (self.s, self.t, self.dk);
        let (y, z, g, u, v, w, vx) = (
            &self.y, &self.z, &self.g, &self.u, &self.v, &self.w, &self.vx,
        );
        let (x, xx) = (&mut self.x, &mut self.xx);
        for _ in 0..self.passes {
            for k in 0..self.n {
                body!(blk, "lfk20 body");
                let k = black_box(k);
                let di = y[k] - g[k] / (xx[k] + dk);
                let mut dn = 0.2;
                if di != 0.0 {
                    dn = s.max((z[k] / di).min(t));
                }
                x[k] = ((w[k] + v[k] * dn) * xx[k] + u[k]) / (vx[k] + v[k] * dn);
                xx[k + 1] = (x[k] - xx[k]) * dn + xx[k];
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.x) + sum(&self.xx)
    }
}

/// Kernel 21, matrix * matrix product: `PX(i,j) = PX(i,j) + VY(i,k) *
/// CX(k,j)` for k = 1..25, i = 1..25, j = 1..n (j innermost).
pub(crate) struct K21 {
    n: usize,
    passes: usize,
    /// 25 x n: `PX(i,j)` at `px[(j-1) * 25 + i-1]`; `CX(k,j)` likewise.
    px: Vec<f64>,
    cx: Vec<f64>,
    /// 25 x 25: `VY(i,k)` at `vy[(k-1) * 25 + i-1]`.
    vy: Vec<f64>,
}

impl Lfk for K21 {
    fn new(s: Size) -> Self {
        K21 {
            n: s.n,
            passes: s.passes,
            px: fill(25 * s.n, 2101, 0.0, 1.0),
            cx: fill(25 * s.n, 2102, -1.0, 1.0),
            vy: fill(25 * 25, 2103, -0.1, 0.1),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let (px, cx, vy) = (&mut self.px, &self.cx, &self.vy);
        for _ in 0..self.passes {
            for k in 0..25 {
                for i in 0..25 {
                    for j in 0..self.n {
                        body!(blk, "lfk21 body");
                        let j = black_box(j);
                        px[j * 25 + i] += vy[k * 25 + i] * cx[j * 25 + k];
                    }
                }
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.px)
    }
}

/// Kernel 22, Planckian distribution: `U(n) = 0.99*EXPMAX*V(n)` with
/// `EXPMAX = 20`, then for k = 1..n `Y(k) = U(k)/V(k)`,
/// `W(k) = X(k)/(EXP(Y(k)) - 1)`.
pub(crate) struct K22 {
    n: usize,
    passes: usize,
    u: Vec<f64>,
    v: Vec<f64>,
    w: Vec<f64>,
    x: Vec<f64>,
    y: Vec<f64>,
}

impl Lfk for K22 {
    fn new(s: Size) -> Self {
        let n = s.n;
        K22 {
            n,
            passes: s.passes,
            // U/V in (0.1, 20): EXP stays finite and away from 1.
            u: fill(n, 2201, 0.1, 2.0),
            v: fill(n, 2202, 0.1, 1.0),
            w: vec![0.0; n],
            x: fill(n, 2203, 0.0, 1.0),
            y: vec![0.0; n],
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let n = self.n;
        let expmax = 20.0;
        let (u, v, w, x, y) = (&mut self.u, &self.v, &mut self.w, &self.x, &mut self.y);
        for _ in 0..self.passes {
            u[n - 1] = 0.99 * expmax * v[n - 1];
            for k in 0..n {
                body!(blk, "lfk22 body");
                let k = black_box(k);
                y[k] = u[k] / v[k];
                w[k] = x[k] / (y[k].exp() - 1.0);
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.w) + sum(&self.y)
    }
}

/// Kernel 23, 2-D implicit hydrodynamics fragment, j = 2..6, k = 2..n:
/// `QA = ZA(k,j+1)*ZR(k,j) + ZA(k,j-1)*ZB(k,j) + ZA(k+1,j)*ZU(k,j)
/// + ZA(k-1,j)*ZV(k,j) + ZZ(k,j)`, `ZA(k,j) = ZA(k,j) + 0.175*(QA - ZA(k,j))`.
pub(crate) struct K23 {
    n: usize,
    passes: usize,
    /// 7 columns of n + 1: `ZA(k,j)` at `za[(j-1) * (n+1) + k-1]`.
    za: Vec<f64>,
    zb: Vec<f64>,
    zr: Vec<f64>,
    zu: Vec<f64>,
    zv: Vec<f64>,
    zz: Vec<f64>,
}

impl Lfk for K23 {
    fn new(s: Size) -> Self {
        let len = 7 * (s.n + 1);
        // Coefficients below 1/4 each: the relaxation converges.
        K23 {
            n: s.n,
            passes: s.passes,
            za: fill(len, 2301, 0.0, 1.0),
            zb: fill(len, 2302, 0.0, 0.24),
            zr: fill(len, 2303, 0.0, 0.24),
            zu: fill(len, 2304, 0.0, 0.24),
            zv: fill(len, 2305, 0.0, 0.24),
            zz: fill(len, 2306, 0.0, 1.0),
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let n = self.n;
        let w = n + 1;
        let fw = 0.175;
        let za = &mut self.za;
        let (zb, zr, zu, zv, zz) = (&self.zb, &self.zr, &self.zu, &self.zv, &self.zz);
        for _ in 0..self.passes {
            // Fortran j = 2..6 and k = 2..n, here j - 1 and k - 1.
            for j in 1..6 {
                for k in 1..n {
                    body!(blk, "lfk23 body");
                    let k = black_box(k);
                    let at = j * w + k;
                    let qa = za[at + w] * zr[at]
                        + za[at - w] * zb[at]
                        + za[at + 1] * zu[at]
                        + za[at - 1] * zv[at]
                        + zz[at];
                    za[at] += fw * (qa - za[at]);
                }
            }
        }
    }

    fn checksum(&self) -> f64 {
        sum(&self.za)
    }
}

/// Kernel 24, location of the first minimum in an array:
/// `X(n/2) = -1.0E10`, then `m` is the first k with the smallest `X(k)`.
pub(crate) struct K24 {
    n: usize,
    passes: usize,
    x: Vec<f64>,
    m: usize,
}

impl Lfk for K24 {
    fn new(s: Size) -> Self {
        K24 {
            n: s.n,
            passes: s.passes,
            x: fill(s.n, 2401, -1.0, 1.0),
            m: 0,
        }
    }

    #[inline(never)]
    fn run(&mut self, full: bool) {
        let mut blk = Blocks::new(full);
        let n = self.n;
        let x = &mut self.x;
        for _ in 0..self.passes {
            // Fortran X(n/2), here x[n/2 - 1].
            x[n / 2 - 1] = -1.0e10;
            let mut m = 0;
            for k in 1..n {
                body!(blk, "lfk24 body");
                let k = black_box(k);
                if x[k] < x[m] {
                    m = k;
                }
            }
            self.m = m;
        }
    }

    fn checksum(&self) -> f64 {
        // 1-based, as the Fortran's m.
        (self.m + 1) as f64
    }
}
