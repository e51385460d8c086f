//! The generator kinds and the rules a fill must meet before hipRAND sees it (pure, tested without a
//! device).

use crate::error::{Error, Result};
use hiprand_sys as sys;

/// A hipRAND generator type (`hiprandRngType_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum RngType {
    /// The library's default pseudo-random generator (XORWOW on cuRAND and rocRAND).
    PseudoDefault,
    /// XORWOW.
    Xorwow,
    /// MRG32k3a.
    Mrg32k3a,
    /// Mersenne Twister for GPUs (MTGP32).
    Mtgp32,
    /// Mersenne Twister 19937.
    Mt19937,
    /// Philox 4x32 with 10 rounds.
    Philox4x32_10,
    /// The library's default quasi-random generator (Sobol32).
    QuasiDefault,
    /// Sobol 32-bit quasi-random sequence.
    Sobol32,
    /// Scrambled Sobol 32-bit.
    ScrambledSobol32,
    /// Sobol 64-bit (fills of 32-bit values are refused by the library).
    Sobol64,
    /// Scrambled Sobol 64-bit.
    ScrambledSobol64,
}

impl RngType {
    /// The C value.
    pub fn raw(self) -> sys::hiprandRngType_t {
        match self {
            RngType::PseudoDefault => sys::HIPRAND_RNG_PSEUDO_DEFAULT,
            RngType::Xorwow => sys::HIPRAND_RNG_PSEUDO_XORWOW,
            RngType::Mrg32k3a => sys::HIPRAND_RNG_PSEUDO_MRG32K3A,
            RngType::Mtgp32 => sys::HIPRAND_RNG_PSEUDO_MTGP32,
            RngType::Mt19937 => sys::HIPRAND_RNG_PSEUDO_MT19937,
            RngType::Philox4x32_10 => sys::HIPRAND_RNG_PSEUDO_PHILOX4_32_10,
            RngType::QuasiDefault => sys::HIPRAND_RNG_QUASI_DEFAULT,
            RngType::Sobol32 => sys::HIPRAND_RNG_QUASI_SOBOL32,
            RngType::ScrambledSobol32 => sys::HIPRAND_RNG_QUASI_SCRAMBLED_SOBOL32,
            RngType::Sobol64 => sys::HIPRAND_RNG_QUASI_SOBOL64,
            RngType::ScrambledSobol64 => sys::HIPRAND_RNG_QUASI_SCRAMBLED_SOBOL64,
        }
    }

    /// Whether its sequence has an offset to set (`hiprandSetGeneratorOffset`): every kind but the
    /// Mersenne Twisters (MTGP32, MT19937), which hipRAND refuses one (`HIPRAND_STATUS_TYPE_ERROR`).
    pub fn has_offset(self) -> bool {
        !matches!(self, RngType::Mtgp32 | RngType::Mt19937)
    }

    /// Whether it is a quasi-random (low-discrepancy) generator.
    pub fn is_quasi(self) -> bool {
        matches!(
            self,
            RngType::QuasiDefault
                | RngType::Sobol32
                | RngType::ScrambledSobol32
                | RngType::Sobol64
                | RngType::ScrambledSobol64
        )
    }
}

/// The order in which a generator's threads lay out their values (`hiprandOrdering_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// `HIPRAND_ORDERING_PSEUDO_BEST`: the library's fastest order for pseudo-random values.
    PseudoBest,
    /// `HIPRAND_ORDERING_PSEUDO_DEFAULT`: the default thread sequence (the legacy one, for now).
    PseudoDefault,
    /// `HIPRAND_ORDERING_PSEUDO_SEEDED`: a seeding pattern for fast, lower-quality values.
    PseudoSeeded,
    /// `HIPRAND_ORDERING_PSEUDO_LEGACY`: the same sequence across releases (not across backends).
    PseudoLegacy,
    /// `HIPRAND_ORDERING_PSEUDO_DYNAMIC`: adjusted to the device, the best performance.
    PseudoDynamic,
    /// `HIPRAND_ORDERING_QUASI_DEFAULT`: the one order of quasi-random points.
    QuasiDefault,
}

impl Ordering {
    /// The C value (hipRAND's `hiprandOrdering_t`, ROCm 6 and later).
    pub fn raw(self) -> u32 {
        match self {
            Ordering::PseudoBest => 100,
            Ordering::PseudoDefault => 101,
            Ordering::PseudoSeeded => 102,
            Ordering::PseudoLegacy => 103,
            Ordering::PseudoDynamic => 104,
            Ordering::QuasiDefault => 201,
        }
    }

    /// Whether it orders quasi-random points (else pseudo-random values).
    pub fn is_quasi(self) -> bool {
        self == Ordering::QuasiDefault
    }
}

/// A pseudo-random ordering for a pseudo-random generator, the quasi-random one for a quasi-random one.
pub(crate) fn ordering(kind: RngType, order: Ordering) -> Result<()> {
    if kind.is_quasi() == order.is_quasi() {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            what: "generator ordering",
            value: format!("{order:?} for {kind:?}"),
            reason: "pseudo-random generators take a pseudo-random ordering, quasi-random ones QuasiDefault"
                .into(),
        })
    }
}

/// The most dimensions a quasi-random generator takes (hipRAND's and cuRAND's limit).
pub const MAX_DIMENSIONS: u32 = 20_000;

pub(crate) fn pseudo_only(kind: RngType, what: &'static str) -> Result<()> {
    if kind.is_quasi() {
        return Err(Error::InvalidArgument {
            what,
            value: format!("{kind:?}"),
            reason: "only pseudo-random generators take a seed".into(),
        });
    }
    Ok(())
}

pub(crate) fn dimensions(kind: RngType, dims: u32) -> Result<()> {
    if !kind.is_quasi() {
        return Err(Error::InvalidArgument {
            what: "quasi-random dimensions",
            value: format!("{dims} for {kind:?}"),
            reason: "only quasi-random generators have dimensions".into(),
        });
    }
    if !(1..=MAX_DIMENSIONS).contains(&dims) {
        return Err(Error::InvalidArgument {
            what: "quasi-random dimensions",
            value: dims.to_string(),
            reason: format!("1 to {MAX_DIMENSIONS}"),
        });
    }
    Ok(())
}

/// The count to generate for a buffer of `len` elements. A quasi-random generator fills whole points
/// (a multiple of its dimensions); `pair_start` (normal and log-normal fills: the buffer's address in
/// elements) asks pseudo-random generators for an even count starting at a two-element boundary, as
/// cuRAND requires (Box-Muller pairs).
pub(crate) fn length(
    kind: RngType,
    dims: u32,
    len: usize,
    pair_start: Option<usize>,
) -> Result<usize> {
    if kind.is_quasi() && len % dims as usize != 0 {
        return Err(Error::InvalidArgument {
            what: "quasi-random fill length",
            value: len.to_string(),
            reason: format!(
                "a {kind:?} generator of {dims} dimensions fills a multiple of {dims} values"
            ),
        });
    }
    if let (false, Some(start)) = (kind.is_quasi(), pair_start) {
        if len % 2 != 0 {
            return Err(Error::InvalidArgument {
                what: "normal fill length",
                value: len.to_string(),
                reason: "pseudo-random normal and log-normal values come in pairs: the length must be even"
                    .into(),
            });
        }
        if start % 2 != 0 {
            return Err(Error::InvalidArgument {
                what: "normal fill start",
                value: "an odd element offset".into(),
                reason: "pseudo-random normal and log-normal values are written in pairs: the memory must \
                         start at a two-element boundary (a view at an even offset)"
                    .into(),
            });
        }
    }
    Ok(len)
}

pub(crate) fn moments(mean_finite: bool, stddev_ok: bool) -> Result<()> {
    if !mean_finite {
        return Err(Error::InvalidArgument {
            what: "mean",
            value: "not finite".into(),
            reason: "the mean must be a finite number".into(),
        });
    }
    if !stddev_ok {
        return Err(Error::InvalidArgument {
            what: "stddev",
            value: "not positive and finite".into(),
            reason: "the standard deviation must be a positive finite number".into(),
        });
    }
    Ok(())
}

pub(crate) fn lambda(lambda: f64) -> Result<()> {
    if lambda.is_finite() && lambda > 0.0 {
        Ok(())
    } else {
        Err(Error::InvalidArgument {
            what: "Poisson lambda",
            value: lambda.to_string(),
            reason: "the mean of a Poisson distribution must be positive and finite".into(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn what(r: Result<usize>) -> &'static str {
        match r {
            Err(Error::InvalidArgument { what, .. }) => what,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn quasi_fills_are_whole_points_and_normals_come_in_aligned_pairs() {
        assert_eq!(length(RngType::Sobol32, 3, 9, None).unwrap(), 9);
        assert_eq!(
            what(length(RngType::Sobol32, 3, 10, None)),
            "quasi-random fill length"
        );
        // Quasi-random normals have no pair rule.
        assert_eq!(length(RngType::Sobol32, 1, 7, Some(3)).unwrap(), 7);
        assert_eq!(length(RngType::Philox4x32_10, 1, 7, None).unwrap(), 7);
        assert_eq!(length(RngType::Xorwow, 1, 8, Some(4)).unwrap(), 8);
        assert_eq!(
            what(length(RngType::Xorwow, 1, 7, Some(4))),
            "normal fill length"
        );
        assert_eq!(
            what(length(RngType::Mrg32k3a, 1, 8, Some(5))),
            "normal fill start"
        );
        assert_eq!(length(RngType::Mtgp32, 1, 0, Some(0)).unwrap(), 0);
    }

    #[test]
    fn seeds_dimensions_and_parameters_are_checked() {
        assert!(pseudo_only(RngType::Philox4x32_10, "seed").is_ok());
        assert!(pseudo_only(RngType::ScrambledSobol64, "seed").is_err());
        assert!(dimensions(RngType::Sobol32, 1).is_ok());
        assert!(dimensions(RngType::Sobol32, MAX_DIMENSIONS).is_ok());
        assert!(dimensions(RngType::Sobol32, 0).is_err());
        assert!(dimensions(RngType::Sobol32, MAX_DIMENSIONS + 1).is_err());
        assert!(dimensions(RngType::Xorwow, 2).is_err());
        assert!(moments(true, true).is_ok());
        assert!(matches!(
            moments(false, true),
            Err(Error::InvalidArgument { what: "mean", .. })
        ));
        assert!(matches!(
            moments(true, false),
            Err(Error::InvalidArgument { what: "stddev", .. })
        ));
        assert!(lambda(0.5).is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(lambda(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn orderings_match_their_generators_and_the_header_values() {
        assert!(ordering(RngType::Philox4x32_10, Ordering::PseudoDynamic).is_ok());
        assert!(ordering(RngType::Sobol32, Ordering::QuasiDefault).is_ok());
        assert!(ordering(RngType::Xorwow, Ordering::QuasiDefault).is_err());
        assert!(ordering(RngType::Sobol64, Ordering::PseudoLegacy).is_err());
        let all = [
            Ordering::PseudoBest,
            Ordering::PseudoDefault,
            Ordering::PseudoSeeded,
            Ordering::PseudoLegacy,
            Ordering::PseudoDynamic,
            Ordering::QuasiDefault,
        ];
        assert_eq!(all.map(Ordering::raw), [100, 101, 102, 103, 104, 201]);
        assert_eq!(all.iter().filter(|o| o.is_quasi()).count(), 1);
    }

    #[test]
    fn only_the_mersenne_twisters_have_no_offset() {
        for kind in [RngType::Mtgp32, RngType::Mt19937] {
            assert!(!kind.has_offset() && !kind.is_quasi(), "{kind:?}");
        }
        for kind in [
            RngType::PseudoDefault,
            RngType::Xorwow,
            RngType::Mrg32k3a,
            RngType::Philox4x32_10,
            RngType::QuasiDefault,
            RngType::Sobol32,
            RngType::ScrambledSobol32,
            RngType::Sobol64,
            RngType::ScrambledSobol64,
        ] {
            assert!(kind.has_offset(), "{kind:?}");
        }
    }

    #[test]
    fn kinds_map_to_the_header_values() {
        let all = [
            RngType::PseudoDefault,
            RngType::Xorwow,
            RngType::Mrg32k3a,
            RngType::Mtgp32,
            RngType::Mt19937,
            RngType::Philox4x32_10,
            RngType::QuasiDefault,
            RngType::Sobol32,
            RngType::ScrambledSobol32,
            RngType::Sobol64,
            RngType::ScrambledSobol64,
        ];
        let raw: Vec<u32> = all.iter().map(|k| k.raw()).collect();
        assert_eq!(raw, [400, 401, 402, 403, 404, 405, 500, 501, 502, 503, 504]);
        assert_eq!(all.iter().filter(|k| k.is_quasi()).count(), 5);
    }
}
