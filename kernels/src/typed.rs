//! Kernels written with `#[kernel]` (`hiprs-kernel-macros`): plain safe functions over `In<T>` (checked
//! reads), `Out<T>`, `OutChunk<T, N>`, `OutBlock<T, N>`, `Out2d<T>` (each thread writes only its own
//! elements) and `Shared<T, K>` (the block's shared memory, phases and barrier in the type), their
//! indices 64-bit over every launch dimension. Each is exported as `NAME_hkFINGERPRINT`; the host launches it safely through the handle
//! the same macro generates there (`tests/gpu_typed_kernels.rs`, `examples/rust_kernels.rs`, which
//! include this file).
//!
//! No `unsafe` here: the macro's entry points hold the only one.

use hip_kernel_macros::kernel;
use hip_rs_kernel_types::device::{In, Out, Out2d, OutBlock, OutChunk, Shared};
use hip_rs_kernel_types::{gpu, Affine};

/// `c[i] = a[i] + b[i]` for each `i < c.len()`, one element per thread at its linear index (so any 1-D,
/// 2-D or 3-D grid covers `c` x-fastest); a missing input element reads as 0.
#[kernel]
pub fn vector_add(a: In<f32>, b: In<f32>, mut c: Out<f32>) {
    let i = gpu::global_linear_id();
    if let Some(c_i) = c.mine() {
        *c_i = a.get(i).unwrap_or(0.0) + b.get(i).unwrap_or(0.0);
    }
}

/// `y[i] = a * x[i] + y[i]` over `f32`, in a grid-stride loop: any grid covers all of `y`.
#[kernel]
pub fn saxpy_f32(a: f32, x: In<f32>, mut y: Out<f32>) {
    y.for_each_mine(|i, y_i| *y_i += a * x.get(i).unwrap_or(0.0));
}

/// `y[i] = a * x[i] + y[i]` over `f64`, in a grid-stride loop.
#[kernel]
pub fn saxpy_f64(a: f64, x: In<f64>, mut y: Out<f64>) {
    y.for_each_mine(|i, y_i| *y_i += a * x.get(i).unwrap_or(0.0));
}

/// `y[i] = i` for `i < y.len()`, one element per thread: which index each thread of a 1-D, 2-D or 3-D
/// grid computed (the host checks each element was written once, by the thread it expects).
#[kernel]
pub fn linear_ids(mut y: Out<u64>) {
    let i = gpu::global_linear_id();
    if let Some(y_i) = y.mine() {
        *y_i = i;
    }
}

/// `y[i] += 1` for `i < y.len()`, one element per thread: after one launch every element is 1 exactly
/// when each was reached by one thread, which a grid past 2^32 threads tests (a 32-bit index would wrap
/// and reach the first elements twice).
#[kernel]
pub fn count_once(mut y: Out<u8>) {
    if let Some(y_i) = y.mine() {
        *y_i = y_i.wrapping_add(1);
    }
}

/// `y[i] = a * x[i]` in chunks of 4 contiguous elements per thread, grid-stride over chunks: any grid
/// covers all of `y`; a missing input element reads as 0.
#[kernel]
pub fn scale_chunks_f32(a: f32, x: In<f32>, mut y: OutChunk<f32, 4>) {
    y.for_each_mine(|first, chunk| {
        for (i, e) in (first..).zip(chunk.iter_mut()) {
            *e = a * x.get(i).unwrap_or(0.0);
        }
    });
}

/// `y[i] = x[i] * p.scale + p.offset` for `i < min(p.len, y.len())`, grid-stride; reads its parameters
/// from a `#[repr(C)]` struct shared with the host ([`Affine`]), one element of device memory: a struct
/// goes through `In<Affine>` (rustc passes an aggregate `gpu-kernel` parameter by pointer, so by value
/// the host and the kernel would disagree). Elements from `p.len` on stay untouched.
#[kernel]
pub fn affine_f32(p: In<Affine>, x: In<f32>, mut y: Out<f32>) {
    if let Some(p) = p.get(0) {
        y.for_each_mine(|i, y_i| {
            if i < p.len {
                *y_i = p.apply(x.get(i).unwrap_or(0.0));
            }
        });
    }
}

/// The sum (wrapping) of each block's elements of `input` (the elements at its threads'
/// [`gpu::global_linear_id`]s; a missing one is 0) into `partial[b]` for block `b`
/// ([`gpu::block_linear_id`]): a tree reduction in shared memory, any block shape and size (not only
/// powers of two). The launch needs 4 bytes of shared memory per thread (`block_sum_u32::with_shared`).
#[kernel]
pub fn block_sum_u32(input: In<u32>, mut partial: OutBlock<u32>, mut tile: Shared<u32>) {
    let t = u64::from(gpu::thread_linear_id_in_block());
    if let Some(slot) = tile.mine(0) {
        *slot = input.get(gpu::global_linear_id()).unwrap_or(0);
    }
    let mut sums = tile.sync();
    // Halves of the next power of two: slots past the block's read as 0. The same in every thread (it
    // depends on the block's size only), so every thread reaches every barrier.
    let mut stride = u64::from(gpu::block_threads()).next_power_of_two() / 2;
    while stride > 0 {
        let sum = if t < stride {
            let right = sums.get(t + stride).unwrap_or(0);
            sums.get(t).unwrap_or(0).wrapping_add(right)
        } else {
            0
        };
        let mut tile = sums.sync(); // every read of this step done
        if t < stride {
            if let Some(slot) = tile.mine(0) {
                *slot = sum;
            }
        }
        sums = tile.sync(); // every write of this step visible
        stride /= 2;
    }
    if let Some(p) = partial.mine() {
        *p = sums.get(0).unwrap_or(0);
    }
}

/// `c = a b` for row-major `a` (`m x k`), `b` (`k x n`), `c` (`m x n`, passed with `n` as its row
/// length): the thread at global `(x, y)` computes `c[y][x]`, in tiles of `T x T` staged in shared
/// memory for blocks of `T x T` threads (2 slots per thread: its element of the `a` tile, then of the `b`
/// tile). Another block shape, or a `k` within the block's width of `u64::MAX`, writes nothing. Sums in
/// the order `k = 0, 1, ..` without fused multiply-adds, so the host can compute the same bits.
#[kernel]
pub fn matmul_f32(
    m: u64,
    n: u64,
    k: u64,
    a: In<f32>,
    b: In<f32>,
    mut c: Out2d<f32>,
    mut tiles: Shared<f32, 2>,
) {
    let t = u64::from(gpu::block_dim_x());
    // The same in every thread of a block: the whole block leaves, or none of it. A `k` within `t` of
    // u64::MAX is refused here, once, so the loop's `kt + t` below cannot wrap (a saturating add there
    // cost a compare and a select per tile: 1.036x against 1.054x with it, H200, 2026-12-06).
    if u64::from(gpu::block_dim_y()) != t || gpu::block_dim_z() != 1 || k.checked_add(t).is_none() {
        return;
    }
    let (tx, ty) = (
        u64::from(gpu::thread_idx_x()),
        u64::from(gpu::thread_idx_y()),
    );
    let (row, col) = (gpu::global_id_y(), gpu::global_id_x());
    let b_tile = t * t;
    // My row of a and my column of b, each bounds-checked once, as views that are empty where they do
    // not fit (a row past m, a column past n, or past the input): a tile load is then one compare,
    // `kt + tx < len` (`kt + ty < len`), as in the unchecked twin, where an `Option` view cost a test of
    // its own in every tile (1.005x against 1.036x with `Option`s, H200, 2026-12-06).
    let a_row = a.slice_or_empty(row.saturating_mul(k), if row < m { k } else { 0 });
    let b_col = b.strided_or_empty(col, n, if col < n { k } else { 0 });
    let mut acc = 0.0f32;
    let mut kt = 0;
    while kt < k {
        // My slot (ty t + tx) of the a tile: a[row][kt + tx]; of the b tile: b[kt + ty][col].
        if let Some(slot) = tiles.mine(0) {
            *slot = a_row.get(kt + tx).unwrap_or(0.0);
        }
        if let Some(slot) = tiles.mine(1) {
            *slot = b_col.get(kt + ty).unwrap_or(0.0);
        }
        let tile = tiles.sync();
        // My row of the a tile and my column of the b tile, each bounds-checked once here. Both are `t`
        // long, so the loop bound `len` is both lengths: the compiler proves every `j` inside them, drops
        // the per-element checks and unrolls the loop as it does the unchecked twin's. The column is
        // empty rather than `None` where it does not fit, so its stride stays `t`, the same in every
        // thread: each of its reads is one shared load, as in the twin.
        let tile_col = tile.strided_or_empty(b_tile + tx, t, t);
        if let Some(tile_row) = tile.slice(ty * t, t) {
            let len = tile_row.len().min(tile_col.len() as usize);
            // An index loop on purpose: the iterator forms compile to a loop the backend neither
            // unrolls nor frees of its checks.
            #[allow(clippy::needless_range_loop)]
            for j in 0..len {
                acc += tile_row[j] * tile_col.get(j as u64).unwrap_or(0.0);
            }
        }
        tiles = tile.sync();
        kt += t; // below k + t, which does not wrap (checked above)
    }
    if row < m {
        if let Some(c_rc) = c.mine() {
            *c_rc = acc;
        }
    }
}
