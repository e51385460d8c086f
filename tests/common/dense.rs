//! Host-side dense matrices for the solver and sparse tests: known symmetric positive definite
//! matrices, products, and the largest difference between two results.

/// A column-major `n x n` symmetric positive definite matrix with leading dimension `ld` (padding
/// filled with a marker): `n + 1 + shift` on the diagonal, small symmetric values off it (diagonally
/// dominant).
pub fn spd_shifted(n: usize, ld: usize, shift: f64) -> Vec<f64> {
    let mut a = vec![-777.0; ld * n];
    for j in 0..n {
        for i in 0..n {
            a[i + j * ld] = if i == j {
                n as f64 + 1.0 + shift
            } else {
                (((i + j) * 7 % 11) as f64 - 5.0) / 10.0
            };
        }
    }
    a
}

/// [`spd_shifted`] with no shift: `n + 1` on the diagonal.
pub fn spd(n: usize, ld: usize) -> Vec<f64> {
    spd_shifted(n, ld, 0.0)
}

/// `y = A x` for a column-major `rows x cols` matrix with leading dimension `ld`.
pub fn matvec(a: &[f64], rows: usize, cols: usize, ld: usize, x: &[f64]) -> Vec<f64> {
    (0..rows)
        .map(|i| (0..cols).map(|j| a[i + j * ld] * x[j]).sum())
        .collect()
}

/// The largest absolute difference between corresponding elements.
pub fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}
