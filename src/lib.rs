//! Root package: see tests/ and examples/.

/// The README's Rust code blocks, compiled by `cargo test` as doctests of this package: the front page's
/// example must build against the crate as it is.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
