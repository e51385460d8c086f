//! Root package: see tests/ and examples/.
