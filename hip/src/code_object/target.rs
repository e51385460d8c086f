//! Whether an offload bundle holds a code object for a device, decided the way HIP's loader decides it.
//!
//! HIP 5.x (`extractCodeObjectFromFatBinary` and `FatBinaryInfo::ExtractFatBinary` in hipamd) does not
//! return an error when a bundle has no entry for the current device: it calls `guarantee(false, ...)`,
//! which aborts the process. So before such a bundle reaches HIP, [`bundle_for_device`] looks for an entry
//! HIP would take, with HIP's own rule (`isCodeObjectCompatibleWithDevice`):
//!
//! - an entry id is `<kind>-<triple>--<target id>`; only kinds `hipv4`, `hip` and `hcc` are code objects;
//! - for `hipv4` entries the target id is in the entry id: the processor must equal the device's, and
//!   `sramecc` / `xnack`, where the entry names them (in that order), must equal the device's settings;
//! - an id ending in a feature name without a value (`...--gfx90a:xnack`) makes HIP's parser throw
//!   `std::out_of_range`, uncaught: such an entry, met before a matching one, is refused;
//! - pre-v4 (`hip`, `hcc`) entries carry their target in ELF flags that this crate does not decode: a bundle
//!   with no matching v4 entry but some pre-v4 one is refused rather than risk the abort.

use super::bad;
use crate::error::Result;

const TRIPLE: &str = "amdgcn-amd-amdhsa-";

/// How HIP's `getTargetIDValue` reads a target id `processor[:sramecc±][:xnack±]`.
#[derive(Debug, PartialEq, Eq)]
enum Parsed<'a> {
    /// Processor, sramecc and xnack settings (`' '` for one not named).
    Target(&'a str, char, char),
    /// HIP's parse fails or leaves text over: not compatible.
    Invalid,
    /// A feature name ends the id with no value after it: HIP's `input.substr(1)` on the empty rest throws
    /// `std::out_of_range`, which nothing catches, and the process aborts.
    Throws,
}

fn target_id(id: &str) -> Parsed<'_> {
    let (processor, mut rest) = match id.find(':') {
        Some(at) => (&id[..at], &id[at..]),
        None => (id, ""),
    };
    let mut feature = |name: &str| -> Result<char, Parsed<'static>> {
        match rest.strip_prefix(name) {
            None => Ok(' '),
            Some(after) => {
                let value = after.chars().next().ok_or(Parsed::Throws)?;
                rest = &after[value.len_utf8()..];
                if matches!(value, '+' | '-') {
                    Ok(value)
                } else {
                    Err(Parsed::Invalid)
                }
            }
        }
    };
    let sramecc = match feature(":sramecc") {
        Ok(v) => v,
        Err(p) => return p,
    };
    let xnack = match feature(":xnack") {
        Ok(v) => v,
        Err(p) => return p,
    };
    if rest.is_empty() {
        Parsed::Target(processor, sramecc, xnack)
    } else {
        Parsed::Invalid
    }
}

fn without_triple(s: &str) -> Option<&str> {
    s.strip_prefix(TRIPLE)?.strip_prefix('-')
}

/// HIP's `isCodeObjectCompatibleWithDevice` for a code object target `co` and a device target `agent`,
/// both `amdgcn-amd-amdhsa--<target id>`: `Err` where HIP itself would abort while comparing them.
fn compatible_or_abort(co: &str, agent: &str) -> Result<bool, ()> {
    if co == agent {
        return Ok(true);
    }
    let Some(co) = without_triple(co) else {
        return Ok(false);
    };
    let (cp, cs, cx) = match target_id(co) {
        Parsed::Target(p, s, x) => (p, s, x),
        Parsed::Invalid => return Ok(false),
        Parsed::Throws => return Err(()),
    };
    let Some(agent) = without_triple(agent) else {
        return Ok(false);
    };
    let Parsed::Target(ap, as_, ax) = target_id(agent) else {
        return Ok(false);
    };
    Ok(cp == ap && (cs == ' ' || cs == as_) && (cx == ' ' || cx == ax))
}

/// HIP's rule for whether a code object for target `co` runs on a device of target `agent` (both
/// `amdgcn-amd-amdhsa--<target id>`).
pub fn compatible(co: &str, agent: &str) -> bool {
    compatible_or_abort(co, agent) == Ok(true)
}

/// The entry ids of the offload bundle `image`, in order; an error where its descriptor table does not
/// lie whole inside the image (the entries themselves are not checked: that is [`super::check`]).
///
/// Time O(`image.len()`).
pub fn bundle_ids(image: &[u8]) -> Result<Vec<String>> {
    Ok(super::descriptors(image)?
        .iter()
        .map(|d| String::from_utf8_lossy(d.id).into_owned())
        .collect())
}

/// Refuse a bundle that holds no code object HIP would pick for a device whose ISA is `device_target`
/// (`gfx90a:sramecc+:xnack-`, the device's `gcnArchName`); a bundle whose descriptor table does not lie
/// inside the image is an error too (the entries are [`super::check`]'s to check).
///
/// Time O(`image.len()`).
pub fn bundle_for_device(image: &[u8], device_target: &str) -> Result<()> {
    let agent = format!("{TRIPLE}-{device_target}");
    let ids = bundle_ids(image)?;
    let mut pre_v4 = false;
    // In HIP's order: it stops at the first entry that matches, and parses every one before it.
    for (i, id) in ids.iter().enumerate() {
        let (kind, rest) = id.split_once('-').unwrap_or((id.as_str(), ""));
        match kind {
            "hipv4" => match compatible_or_abort(rest, &agent) {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(()) => {
                    return Err(bad(format!(
                        "offload bundle entry {i} (`{id}`) names a target feature without a value; \
                         HIP's loader aborts the process on it"
                    )))
                }
            },
            "hip" | "hcc" => pre_v4 = true,
            _ => {}
        }
    }
    Err(bad(format!(
        "the offload bundle has no code object for this device ({device_target}){}; its entries: {}",
        if pre_v4 {
            " that can be checked (pre-v4 `hip`/`hcc` entries are not decoded, and HIP aborts the \
             process when none matches)"
        } else {
            ""
        },
        if ids.is_empty() { "none".to_string() } else { ids.join(", ") }
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code_object::BUNDLE_MAGIC;
    use crate::error::Error;

    fn t(id: &str) -> String {
        format!("{TRIPLE}-{id}")
    }

    #[test]
    fn target_ids_are_read_as_hips_parser_reads_them() {
        use Parsed::*;
        for (id, parsed) in [
            ("gfx90a", Target("gfx90a", ' ', ' ')),
            ("gfx90a:sramecc+", Target("gfx90a", '+', ' ')),
            ("gfx90a:sramecc-", Target("gfx90a", '-', ' ')),
            ("gfx90a:xnack+", Target("gfx90a", ' ', '+')),
            ("gfx90a:xnack-", Target("gfx90a", ' ', '-')),
            ("gfx90a:sramecc-:xnack+", Target("gfx90a", '-', '+')),
            ("", Target("", ' ', ' ')),
            // Out of HIP's order, repeated, unknown, or with something else after a feature: invalid.
            ("gfx90a:xnack-:sramecc+", Invalid),
            ("gfx90a:xnack+:xnack+", Invalid),
            ("gfx90a:bogus+", Invalid),
            ("gfx90a:", Invalid),
            ("gfx90a:xnack*", Invalid),
            ("gfx90a:sramecc+x", Invalid),
            ("gfx90a:sramecc+:", Invalid),
            ("gfx90a:xnack+:", Invalid),
            // A feature name with nothing after it: HIP's parser throws.
            ("gfx90a:xnack", Throws),
            ("gfx90a:sramecc", Throws),
            ("gfx90a:sramecc+:xnack", Throws),
            // A multi-byte character as the value is refused, not split.
            ("gfx90a:xnackü", Invalid),
        ] {
            assert_eq!(target_id(id), parsed, "{id:?}");
        }
    }

    #[test]
    fn compatibility_and_where_hip_would_abort() {
        let agent = t("gfx90a:sramecc+:xnack-");
        for (co, answer) in [
            ("gfx90a", Ok(true)),
            ("gfx90a:sramecc+", Ok(true)),
            ("gfx90a:xnack-", Ok(true)),
            ("gfx90a:sramecc+:xnack-", Ok(true)),
            ("gfx90a:sramecc-", Ok(false)),
            ("gfx90a:xnack+", Ok(false)),
            ("gfx90a:sramecc-:xnack-", Ok(false)),
            ("gfx90a:sramecc+:xnack+", Ok(false)),
            ("gfx908", Ok(false)),
            ("gfx90", Ok(false)),
            ("gfx90a:bogus+", Ok(false)),
            ("gfx90a:xnack", Err(())),
        ] {
            assert_eq!(compatible_or_abort(&t(co), &agent), answer, "{co}");
            assert_eq!(compatible(&t(co), &agent), answer == Ok(true), "{co}");
        }
        // Identical strings match before any parsing, even ones HIP could not parse.
        assert_eq!(compatible_or_abort("x", "x"), Ok(true));
        assert_eq!(
            compatible_or_abort(&t("gfx90a:xnack"), &t("gfx90a:xnack")),
            Ok(true)
        );
        // Another triple, or none, on either side: not compatible, never an abort.
        for (co, agent) in [
            ("gfx90a", t("gfx90a")),
            ("amdgcn-amd-amdhsa-gfx90a", t("gfx90a")),
            ("amdgcn-amd-amdpal--gfx90a:xnack", t("gfx90a")),
        ] {
            assert_eq!(compatible_or_abort(co, &agent), Ok(false), "{co}");
        }
        assert_eq!(compatible_or_abort(&t("gfx90a"), "gfx90a"), Ok(false));
        assert_eq!(
            compatible_or_abort(&t("gfx90a"), &t("gfx90a:bogus+")),
            Ok(false)
        );
        // A device without the feature settings accepts only code objects that name none.
        assert_eq!(compatible_or_abort(&t("gfx90a"), &t("gfx90a")), Ok(true));
        assert_eq!(
            compatible_or_abort(&t("gfx90a:xnack-"), &t("gfx90a")),
            Ok(false)
        );
        assert_eq!(
            compatible_or_abort(&t("gfx90a:sramecc-"), &t("gfx90a")),
            Ok(false)
        );
    }

    /// A bundle laid out as `clang-offload-bundler` does (entries need not be code objects here:
    /// `bundle_ids` and `bundle_for_device` read the descriptors only).
    fn bundle(ids: &[&str]) -> Vec<u8> {
        let mut b = BUNDLE_MAGIC.to_vec();
        b.extend((ids.len() as u64).to_le_bytes());
        for id in ids {
            b.extend(0u64.to_le_bytes());
            b.extend(0u64.to_le_bytes());
            b.extend((id.len() as u64).to_le_bytes());
            b.extend(id.as_bytes());
        }
        b
    }

    fn refused(image: &[u8], device: &str) -> String {
        match bundle_for_device(image, device) {
            Err(Error::InvalidCodeObject(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bundle_ids_are_listed_in_order() {
        let ids = [
            "host-x86_64-unknown-linux",
            "hipv4-amdgcn-amd-amdhsa--gfx90a",
            "",
            "hip",
        ];
        assert_eq!(bundle_ids(&bundle(&ids)).unwrap(), ids);
        assert!(bundle_ids(&bundle(&[])).unwrap().is_empty());
    }

    #[test]
    fn the_first_compatible_v4_entry_is_taken() {
        let device = "gfx90a:sramecc+:xnack-";
        for ids in [
            &["hipv4-amdgcn-amd-amdhsa--gfx90a"][..],
            &[
                "host-x86_64-unknown-linux",
                "hipv4-amdgcn-amd-amdhsa--gfx908",
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
            ],
            // HIP stops at the match: a later entry it would throw on is never parsed.
            &[
                "hipv4-amdgcn-amd-amdhsa--gfx90a",
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack",
            ],
            // A pre-v4 entry besides a matching v4 one does not matter.
            &[
                "hip-amdgcn-amd-amdhsa-gfx90a",
                "hipv4-amdgcn-amd-amdhsa--gfx90a",
            ],
        ] {
            bundle_for_device(&bundle(ids), device).unwrap_or_else(|e| panic!("{ids:?}: {e}"));
        }
    }

    #[test]
    fn a_bundle_without_the_devices_code_object_is_refused_saying_why() {
        let device = "gfx90a:sramecc+:xnack-";
        let m = refused(
            &bundle(&[
                "host-x86_64-unknown-linux",
                "hipv4-amdgcn-amd-amdhsa--gfx908",
            ]),
            device,
        );
        assert_eq!(
            m,
            "the offload bundle has no code object for this device (gfx90a:sramecc+:xnack-); its \
             entries: host-x86_64-unknown-linux, hipv4-amdgcn-amd-amdhsa--gfx908"
        );
        assert!(refused(&bundle(&[]), device).ends_with("its entries: none"));
        // Only the kind `hipv4` carries its target in the id: another kind naming the device is not taken.
        let m = refused(
            &bundle(&["openmp-amdgcn-amd-amdhsa--gfx90a", "hipv4"]),
            device,
        );
        assert!(m.contains("(gfx90a:sramecc+:xnack-); its entries"), "{m}");
        // Pre-v4 entries (`hip`, `hcc`) are not decoded: the message says so.
        for old in [
            "hip-amdgcn-amd-amdhsa-gfx90a",
            "hcc-amdgcn-amd-amdhsa-gfx90a",
        ] {
            let m = refused(&bundle(&[old]), device);
            assert!(
                m.contains("pre-v4 `hip`/`hcc` entries are not decoded") && m.contains(old),
                "{m}"
            );
        }
        let m = refused(&bundle(&["hipv4-amdgcn-amd-amdhsa--gfx908"]), device);
        assert!(!m.contains("pre-v4"), "{m}");
    }

    #[test]
    fn an_entry_hip_would_throw_on_before_a_match_is_refused() {
        let m = refused(
            &bundle(&[
                "host-x86_64-unknown-linux",
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack",
                "hipv4-amdgcn-amd-amdhsa--gfx90a",
            ]),
            "gfx90a:sramecc+:xnack-",
        );
        assert_eq!(
            m,
            "offload bundle entry 1 (`hipv4-amdgcn-amd-amdhsa--gfx90a:xnack`) names a target feature \
             without a value; HIP's loader aborts the process on it"
        );
    }
}
