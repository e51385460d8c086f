//! Repeated measurements and how they are reported.

/// Repeated measurements of one quantity, sorted.
#[derive(Clone, Debug)]
pub struct Samples(Vec<f64>);

impl Samples {
    pub fn new(mut values: Vec<f64>) -> Samples {
        assert!(!values.is_empty(), "no samples");
        values.sort_by(f64::total_cmp);
        Samples(values)
    }

    pub fn median(&self) -> f64 {
        let v = &self.0;
        let m = v.len() / 2;
        if v.len() % 2 == 1 {
            v[m]
        } else {
            (v[m - 1] + v[m]) / 2.0
        }
    }

    pub fn min(&self) -> f64 {
        self.0[0]
    }

    pub fn max(&self) -> f64 {
        self.0[self.0.len() - 1]
    }

    /// Half the min-max range: how far one run can land from another.
    pub fn spread(&self) -> f64 {
        (self.max() - self.min()) / 2.0
    }

    /// `median (min-max)` with `digits` decimals.
    pub fn show(&self, digits: usize) -> String {
        format!(
            "{:.d$} ({:.d$}-{:.d$})",
            self.median(),
            self.min(),
            self.max(),
            d = digits
        )
    }

    pub fn map(&self, f: impl Fn(f64) -> f64) -> Samples {
        Samples::new(self.0.iter().copied().map(f).collect())
    }
}

/// `a / b` of the medians, as `1.012x`.
pub fn ratio(a: &Samples, b: &Samples) -> String {
    format!("{:.3}x", a.median() / b.median())
}

/// The per-round ratios `a[i] / b[i]` of two contenders measured in the same rounds: their median and
/// range, as `1.002 (0.995-1.010)`. Used by the library benchmarks (blas, rand, fft), not the main one.
#[allow(dead_code)]
pub fn paired_ratio(a: &[f64], b: &[f64]) -> String {
    let r = Samples::new(a.iter().zip(b).map(|(x, y)| x / y).collect());
    format!("{:.3} ({:.3}-{:.3})", r.median(), r.min(), r.max())
}

/// For "lower is better" figures: does `other` beat `ours` by more than its own spread?
pub fn beats_by_more_than_spread(other: &Samples, ours: &Samples) -> bool {
    ours.median() - other.median() > other.spread()
}

/// A small fast generator for benchmark data (xorshift64*), seeded per buffer.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn fill_u32(&mut self, out: &mut [u32]) {
        for x in out {
            *x = self.next_u64() as u32;
        }
    }

    pub fn fill_f32(&mut self, out: &mut [f32]) {
        for x in out {
            *x = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        }
    }
}

/// The median of unsorted values (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    Samples::new(v.to_vec()).median()
}

pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Mean, and half the 95% confidence interval of the mean (normal approximation; the paired-round
/// sections have thousands of samples). One value: an interval of 0.
pub fn mean_ci(v: &[f64]) -> (f64, f64) {
    let (n, mean) = (v.len() as f64, mean(v));
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, 1.96 * (var / n).sqrt())
}
