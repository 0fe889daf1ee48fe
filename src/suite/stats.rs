//! Statistics of repeated measurements: min, median, max, mean and a 95 % confidence interval
//! of the mean (Student's t, so two or three runs get an honestly wide interval), and the test
//! the benchmark uses to tell a change from noise: the two intervals do not overlap.

use serde::{Deserialize, Serialize};

/// The spread of `n` measurements of one quantity (same unit as the samples).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub mean: f64,
    /// 95 % confidence interval of the mean; `None` for a single sample (no noise estimate).
    #[serde(default)]
    pub ci95: Option<(f64, f64)>,
}

impl Spread {
    /// The spread of `samples`; `None` when there are none (or one is not finite).
    pub fn of(samples: &[f64]) -> Option<Spread> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut v = samples.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let mean = v.iter().sum::<f64>() / n as f64;
        let ci95 = (n >= 2).then(|| {
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let half = t975(n - 1) * (var / n as f64).sqrt();
            (mean - half, mean + half)
        });
        Some(Spread {
            n,
            min: v[0],
            median,
            max: v[n - 1],
            mean,
            ci95,
        })
    }

    /// Half the width of the confidence interval relative to the mean, in percent (the noise
    /// figure shown in tables); `None` without an interval.
    pub fn noise_pct(&self) -> Option<f64> {
        let (lo, hi) = self.ci95?;
        (self.mean > 0.0).then(|| (hi - lo) / 2.0 / self.mean * 100.0)
    }
}

/// Whether `now` is larger than `before` beyond the noise of both: the confidence intervals
/// are disjoint with `now` above. Without an interval on either side nothing can be told apart
/// from noise, so the answer is no.
pub fn above_noise(now: &Spread, before: &Spread) -> bool {
    match (now.ci95, before.ci95) {
        (Some((now_lo, _)), Some((_, before_hi))) => now_lo > before_hi,
        _ => false,
    }
}

/// The 97.5th percentile of Student's t distribution with `df` degrees of freedom (two-sided
/// 95 %), from the usual table; the normal value beyond 30.
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => 1.96,
    }
}

/// The geometric mean of the positive values (others are ignored); `None` if there are none.
pub fn geomean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for x in xs.filter(|x| *x > 0.0 && x.is_finite()) {
        sum += x.ln();
        n += 1;
    }
    (n > 0).then(|| (sum / n as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_five_runs() {
        let s = Spread::of(&[10.0, 12.0, 11.0, 13.0, 9.0]).unwrap();
        assert_eq!(
            (s.n, s.min, s.median, s.max, s.mean),
            (5, 9.0, 11.0, 13.0, 11.0)
        );
        // sd = sqrt(2.5), t(4) = 2.776: half width 2.776 * sqrt(2.5 / 5) = 1.963.
        let (lo, hi) = s.ci95.unwrap();
        assert!(
            (lo - 9.037).abs() < 1e-3 && (hi - 12.963).abs() < 1e-3,
            "{lo} {hi}"
        );
        assert!((s.noise_pct().unwrap() - 17.84).abs() < 0.01);
        let one = Spread::of(&[4.0]).unwrap();
        assert_eq!((one.median, one.ci95), (4.0, None));
        assert_eq!(Spread::of(&[1.0, 3.0]).unwrap().median, 2.0);
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn only_disjoint_intervals_are_beyond_noise() {
        let base = Spread::of(&[100.0, 101.0, 99.0]).unwrap();
        let slower = Spread::of(&[110.0, 111.0, 109.0]).unwrap();
        let noisy = Spread::of(&[90.0, 130.0, 110.0]).unwrap();
        assert!(above_noise(&slower, &base));
        assert!(!above_noise(&base, &slower));
        assert!(!above_noise(&noisy, &base));
        let single = Spread::of(&[200.0]).unwrap();
        assert!(!above_noise(&single, &base));
    }

    #[test]
    fn geomean_ignores_non_positive() {
        let g = geomean([2.0, 8.0, 0.0, -1.0].into_iter()).unwrap();
        assert!((g - 4.0).abs() < 1e-12);
        assert!(geomean(std::iter::empty()).is_none());
    }
}
