//! Target names: AMD target ids (`gfx90a:sramecc+`) and NVIDIA `sm_NN`.

use super::*;

/// An AMD GPU target id: a `gfx` processor and optional `:feature+` / `:feature-` settings
/// (`gfx90a:xnack-`), as HIP and clang write them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdArch {
    /// The processor, e.g. `gfx90a`.
    pub processor: String,
    /// Target-id features with their setting, e.g. `("xnack", false)`.
    pub features: Vec<(String, bool)>,
}

impl AmdArch {
    /// Parse `gfx90a`, `gfx1100`, `gfx90a:sramecc+:xnack-`.
    pub fn parse(s: &str) -> Result<AmdArch> {
        let bad = || Error::BadArch {
            arch: s.to_string(),
            expected: "an AMD GPU target id (gfx followed by letters and digits, e.g. gfx90a, \
                       gfx1100, gfx90a:xnack-)",
        };
        let mut parts = s.split(':');
        let processor = parts.next().unwrap_or_default();
        let digits = processor.strip_prefix("gfx").ok_or_else(bad)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(bad());
        }
        let mut features = Vec::new();
        for p in parts {
            let (name, on) = match p.as_bytes().last() {
                Some(b'+') => (&p[..p.len() - 1], true),
                Some(b'-') => (&p[..p.len() - 1], false),
                _ => return Err(bad()),
            };
            if !matches!(name, "xnack" | "sramecc") {
                return Err(bad());
            }
            features.push((name.to_string(), on));
        }
        Ok(AmdArch {
            processor: processor.to_string(),
            features,
        })
    }

    /// The target id as clang and the offload bundle write it (`gfx90a:xnack-`).
    pub fn target_id(&self) -> String {
        let mut s = self.processor.clone();
        for (name, on) in &self.features {
            s.push(':');
            s.push_str(name);
            s.push(if *on { '+' } else { '-' });
        }
        s
    }
}

/// Check an NVIDIA architecture name: `sm_` followed by digits (and an optional `a`), e.g. `sm_70`.
pub fn check_sm(s: &str) -> Result<()> {
    let ok = s.strip_prefix("sm_").is_some_and(|d| {
        let d = d.strip_suffix('a').unwrap_or(d);
        !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
    });
    if ok {
        Ok(())
    } else {
        Err(Error::BadArch {
            arch: s.to_string(),
            expected: "an NVIDIA architecture (sm_ followed by digits, e.g. sm_70)",
        })
    }
}
