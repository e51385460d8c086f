//! Sparse matrices through hipSPARSE (in progress).
