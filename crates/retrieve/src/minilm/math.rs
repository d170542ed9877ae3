//! Numeric kernels of the forward pass: a strided matrix product and the activations.

/// A read-only matrix view: element (i, j) is `data[i * rs + j * cs]`.
pub(super) struct Mat<'a> {
    pub(super) data: &'a [f32],
    pub(super) rs: usize,
    pub(super) cs: usize,
}

impl Mat<'_> {
    /// Whether every element of a `rows × cols` view lies inside `data`.
    pub(super) fn covers(&self, rows: usize, cols: usize) -> bool {
        rows == 0 || cols == 0 || (rows - 1) * self.rs + (cols - 1) * self.cs < self.data.len()
    }
}

/// `c (m × n) = a (m × k) · b (k × n)`, any strides; `c` is overwritten.
pub(super) fn gemm(
    (m, k, n): (usize, usize, usize),
    a: Mat,
    b: Mat,
    c: &mut [f32],
    (rsc, csc): (usize, usize),
) {
    let c_view = Mat {
        data: c,
        rs: rsc,
        cs: csc,
    };
    assert!(a.covers(m, k) && b.covers(k, n) && c_view.covers(m, n));
    // SAFETY: the asserts above keep every element matrixmultiply reads from a and b, and writes
    // to c, inside its slice.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.data.as_ptr(),
            a.rs as isize,
            a.cs as isize,
            b.data.as_ptr(),
            b.rs as isize,
            b.cs as isize,
            0.0,
            c.as_mut_ptr(),
            rsc as isize,
            csc as isize,
        );
    }
}

pub(super) fn add(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

#[cfg(test)]
pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub(super) fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in x.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    if sum > 0.0 {
        x.iter_mut().for_each(|v| *v /= sum);
    }
}

/// GELU with the exact (erf) form BERT was trained with.
pub(super) fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// erf to about 1e-7 (Abramowitz and Stegun 7.1.26), enough for f32 activations.
pub(super) fn erf(x: f32) -> f32 {
    let s = x.signum();
    let x = x.abs() as f64;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    s * (1.0 - poly * (-x * x).exp()) as f32
}
