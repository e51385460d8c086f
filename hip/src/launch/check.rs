//! The launch configuration check: a configuration the device cannot run, or whose threads the kernel
//! cannot number distinctly, is [`Error::InvalidLaunch`] naming the numbers, never sent to HIP.

use super::LaunchConfig;
use crate::device::Limits;
use crate::error::{Error, Result};

/// How a kernel numbers its threads, which bounds the grids it may be launched with: a launch with more
/// threads than the index type holds would give two threads one index, and so one element two writers.
///
/// ```
/// use hip::launch::ThreadIndex;
/// // HIP C++ kernels compute `blockIdx.x * blockDim.x + threadIdx.x` in `unsigned int`:
/// let raw = ThreadIndex::Bits32;
/// // `#[kernel]` functions and `hip_rs_kernel_types::gpu` compute every index in 64 bits:
/// let typed = ThreadIndex::Bits64;
/// assert_ne!(raw, typed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadIndex {
    /// A 32-bit index per axis (`blockIdx.x * blockDim.x + threadIdx.x` in `unsigned int`): grid x block
    /// along each axis must fit in a `u32`. What [`Function::launch`](crate::Function::launch) assumes.
    Bits32,
    /// A 64-bit index over every dimension (`hip_rs_kernel_types::gpu::global_linear_id`): the grid's
    /// threads (grid volume x block volume) must fit in a `u64`.
    Bits64,
}

/// The HIP platform a check applies the rules of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Platform {
    /// AMD: the dispatch packet holds grid x block per axis in a `u32` whatever the kernel computes.
    Amd,
    /// NVIDIA: grids reach (2^31 - 1) x 65535 x 65535 blocks of up to 1024 threads.
    Nvidia,
}

impl Platform {
    /// The platform this crate was built for.
    pub(crate) const CURRENT: Platform = if cfg!(hip_platform = "nvidia") {
        Platform::Nvidia
    } else {
        Platform::Amd
    };
}

/// Refuse a grid `g` of blocks `b` whose threads `index` cannot number distinctly on `platform`, or that
/// AMD's dispatch packet cannot hold.
fn check_thread_count(
    g: super::Dim3,
    b: super::Dim3,
    platform: Platform,
    index: ThreadIndex,
) -> Result<()> {
    let dims = [(g.x, b.x), (g.y, b.y), (g.z, b.z)];
    let axis_over = ["x", "y", "z"]
        .iter()
        .zip(dims)
        .find(|(_, (gd, bd))| u64::from(*gd) * u64::from(*bd) > u64::from(u32::MAX));
    if let Some((axis, (gd, bd))) = axis_over {
        let n = u64::from(gd) * u64::from(bd);
        let max = u32::MAX;
        // AMD: an HSA dispatch packet holds the work-items per dimension (grid * block) in a u32, and HIP
        // computes that product in 32 bits: a larger one would wrap to a smaller launch.
        if platform == Platform::Amd {
            return Err(Error::InvalidLaunch(format!(
                "grid {gd} x block {bd} along {axis} is {n} work-items; AMD devices take at most {max}"
            )));
        }
        if index == ThreadIndex::Bits32 {
            return Err(Error::InvalidLaunch(format!(
                "grid {gd} x block {bd} along {axis} is {n} threads: a 32-bit thread index (blockIdx * \
                 blockDim + threadIdx in unsigned int) wraps past {max}, giving two threads one index; a \
                 kernel computing 64-bit indices launches with Function::launch_with_index(.., \
                 ThreadIndex::Bits64)"
            )));
        }
    }
    // Both volumes fit in 96 bits and the block's was checked against the device's thread limit (at most
    // 2^32 - 1), so the product fits in a u128.
    let threads = g.volume().saturating_mul(b.volume());
    if index == ThreadIndex::Bits64 && threads > u128::from(u64::MAX) {
        return Err(Error::InvalidLaunch(format!(
            "grid {:?} x block {:?} is {threads} threads: a 64-bit thread index wraps past {}",
            (g.x, g.y, g.z),
            (b.x, b.y, b.z),
            u64::MAX
        )));
    }
    Ok(())
}

/// Whether `c` fits the device's `limits` and the kernel (its thread limit, 0 for unknown, its static
/// shared memory, and the dynamic shared memory it opted in to, 0 for none): a configuration that does not
/// is [`Error::InvalidLaunch`] naming the limit, never sent to HIP. Pure arithmetic on the caller's
/// values, none of which can overflow or panic. The rules of this build's platform, for a kernel with
/// 32-bit indices (what the unit tests pin).
#[cfg(test)]
pub(crate) fn check_config(
    c: &LaunchConfig,
    limits: &Limits,
    kernel_max_threads: u32,
    static_shared: u32,
    dynamic_opt_in: u32,
    name: &str,
) -> Result<()> {
    check_config_for(
        Platform::CURRENT,
        ThreadIndex::Bits32,
        c,
        limits,
        kernel_max_threads,
        static_shared,
        dynamic_opt_in,
        name,
    )
}

/// [`check_config`] for a kernel numbering its threads with `index`, on `platform` (a parameter so that
/// both platforms' rules are tested on either).
///
/// Every launch runs it: a configuration that plainly fits ([`plainly_fits`]: a few comparisons in 64-bit
/// arithmetic) returns at once; any other goes through [`check_config_full`], which names the limit a
/// refused one breaks. The two agree on every configuration `plainly_fits` accepts (the unit tests
/// compare them over a sweep of limits and configurations).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn check_config_for(
    platform: Platform,
    index: ThreadIndex,
    c: &LaunchConfig,
    limits: &Limits,
    kernel_max_threads: u32,
    static_shared: u32,
    dynamic_opt_in: u32,
    name: &str,
) -> Result<()> {
    if index == ThreadIndex::Bits32 && plainly_fits(c, limits, kernel_max_threads, static_shared) {
        return Ok(());
    }
    check_config_full(
        platform,
        index,
        c,
        limits,
        kernel_max_threads,
        static_shared,
        dynamic_opt_in,
        name,
    )
}

/// Whether `c` fits the device and the kernel without the shared memory opt-in, for a kernel with 32-bit
/// indices: no extent is 0, the block is within the device's block extents and within the device's and
/// the kernel's thread limits, the grid within the device's grid extents, grid x block along each axis
/// at most `u32::MAX` (so neither platform's thread-count rule refuses it), and static plus dynamic
/// shared memory within the plain per-block limit. `false` sends the configuration to the full check,
/// which accepts or refuses it with the reason: never `true` for one the full check would refuse.
#[inline]
fn plainly_fits(
    c: &LaunchConfig,
    limits: &Limits,
    kernel_max_threads: u32,
    static_shared: u32,
) -> bool {
    let (g, b) = (c.grid, c.block);
    let [bx, by, bz] = limits.max_block_dim;
    let [gx, gy, gz] = limits.max_grid_dim;
    let max_threads = if kernel_max_threads > 0 {
        limits.max_threads_per_block.min(kernel_max_threads)
    } else {
        limits.max_threads_per_block
    };
    // Each factor is a u32, so a product of two fits in a u64, and so does (at most u32::MAX) x u32.
    let xy = u64::from(b.x) * u64::from(b.y);
    let axis_fits = |gd: u32, bd: u32| u64::from(gd) * u64::from(bd) <= u64::from(u32::MAX);
    let shared = u64::from(c.shared_mem_bytes) + u64::from(static_shared);
    g.x != 0
        && g.y != 0
        && g.z != 0
        && b.x != 0
        && b.y != 0
        && b.z != 0
        && b.x <= bx
        && b.y <= by
        && b.z <= bz
        && xy <= u64::from(max_threads)
        && xy * u64::from(b.z) <= u64::from(max_threads)
        && g.x <= gx
        && g.y <= gy
        && g.z <= gz
        && axis_fits(g.x, b.x)
        && axis_fits(g.y, b.y)
        && axis_fits(g.z, b.z)
        && shared <= limits.max_shared_mem_per_block as u64
}

/// The full configuration check behind [`check_config_for`]: every rule, with the reason of a refusal.
#[allow(clippy::too_many_arguments)]
#[cold]
#[inline(never)]
fn check_config_full(
    platform: Platform,
    index: ThreadIndex,
    c: &LaunchConfig,
    limits: &Limits,
    kernel_max_threads: u32,
    static_shared: u32,
    dynamic_opt_in: u32,
    name: &str,
) -> Result<()> {
    let (g, b) = (c.grid, c.block);
    let bad = |msg: String| Err(Error::InvalidLaunch(msg));
    if g.volume() == 0 || b.volume() == 0 {
        return bad(format!("empty grid {g:?} or block {b:?}"));
    }
    let max_block = limits.max_block_dim;
    if b.x > max_block[0] || b.y > max_block[1] || b.z > max_block[2] {
        return bad(format!(
            "block {:?} exceeds the device's block limits {max_block:?}",
            (b.x, b.y, b.z)
        ));
    }
    let mut max_threads = limits.max_threads_per_block;
    if kernel_max_threads > 0 {
        max_threads = max_threads.min(kernel_max_threads);
    }
    if b.volume() > u128::from(max_threads) {
        return bad(format!(
            "block of {} threads exceeds the limit of {max_threads} for kernel `{name}`",
            b.volume(),
        ));
    }
    let max_grid = limits.max_grid_dim;
    if g.x > max_grid[0] || g.y > max_grid[1] || g.z > max_grid[2] {
        return bad(format!(
            "grid {:?} exceeds the device's grid limits {max_grid:?}",
            (g.x, g.y, g.z)
        ));
    }
    check_thread_count(g, b, platform, index)?;
    let dynamic = u64::from(c.shared_mem_bytes);
    let shared = dynamic + u64::from(static_shared);
    let (per_block, optin) = (
        limits.max_shared_mem_per_block as u64,
        limits.max_shared_mem_optin as u64,
    );
    let opted_in = dynamic <= u64::from(dynamic_opt_in) && shared <= optin;
    if shared > per_block && !opted_in {
        let how = if optin > per_block {
            format!(
                "; kernel `{name}` has opted in to {dynamic_opt_in} bytes of dynamic shared memory: \
                 Function::set_max_dynamic_shared_bytes raises that, up to {} on this device",
                optin.saturating_sub(u64::from(static_shared))
            )
        } else {
            String::new()
        };
        return bad(format!(
            "{dynamic} bytes of dynamic plus {static_shared} bytes of static shared memory (kernel \
             `{name}`) exceed the device's {per_block} bytes per block{how}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::Dim3;

    /// An H100's limits: (2^31 - 1) x 65535 x 65535 blocks of up to 1024 threads.
    const H100: Limits = Limits {
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 64],
        max_grid_dim: [i32::MAX as u32, 65535, 65535],
        max_shared_mem_per_block: 49152,
        max_shared_mem_optin: 232448,
    };

    fn on(
        platform: Platform,
        index: ThreadIndex,
        grid: impl Into<Dim3>,
        block: impl Into<Dim3>,
    ) -> Result<()> {
        let c = LaunchConfig::new(grid, block);
        check_config_for(platform, index, &c, &H100, 0, 0, 0, "k")
    }

    fn message(r: Result<()>) -> String {
        match r {
            Err(Error::InvalidLaunch(m)) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn nvidia_refuses_a_grid_a_32_bit_index_would_wrap_naming_the_numbers() {
        // 2^22 blocks of 1024 threads: 2^32 threads along x, one past u32::MAX.
        let m = message(on(Platform::Nvidia, ThreadIndex::Bits32, 1u32 << 22, 1024));
        assert_eq!(
            m,
            "grid 4194304 x block 1024 along x is 4294967296 threads: a 32-bit thread index (blockIdx * \
             blockDim + threadIdx in unsigned int) wraps past 4294967295, giving two threads one index; a \
             kernel computing 64-bit indices launches with Function::launch_with_index(.., \
             ThreadIndex::Bits64)"
        );
        // One block fewer fits: the largest index is 2^32 - 1024 + 1023 = u32::MAX.
        on(
            Platform::Nvidia,
            ThreadIndex::Bits32,
            (1u32 << 22) - 1,
            1024,
        )
        .unwrap();
        // Along y too (65535 blocks of 1024 threads along y: 67107840 threads, fits).
        on(Platform::Nvidia, ThreadIndex::Bits32, (1, 65535), (1, 1024)).unwrap();
    }

    #[test]
    fn nvidia_takes_the_same_grid_for_a_kernel_with_64_bit_indices() {
        on(Platform::Nvidia, ThreadIndex::Bits64, 1u32 << 22, 1024).unwrap();
        // The largest H100 grid: (2^31 - 1) * 1024 threads along x, 2^41 threads over three axes.
        on(
            Platform::Nvidia,
            ThreadIndex::Bits64,
            (i32::MAX as u32, 1, 1),
            1024,
        )
        .unwrap();
        on(
            Platform::Nvidia,
            ThreadIndex::Bits64,
            (i32::MAX as u32, 65535, 65535),
            1,
        )
        .unwrap();
    }

    #[test]
    fn amd_caps_work_items_per_axis_whatever_the_index() {
        for index in [ThreadIndex::Bits32, ThreadIndex::Bits64] {
            let m = message(on(Platform::Amd, index, 1u32 << 22, 1024));
            assert_eq!(
                m,
                "grid 4194304 x block 1024 along x is 4294967296 work-items; AMD devices take at most \
                 4294967295"
            );
        }
    }

    #[test]
    fn a_64_bit_index_refuses_more_threads_than_a_u64_holds() {
        let huge = Limits {
            max_grid_dim: [u32::MAX; 3],
            max_block_dim: [1024; 3],
            ..H100
        };
        let c = LaunchConfig::new(
            (u32::MAX / 1024, u32::MAX / 1024, u32::MAX / 1024),
            (1024, 1, 1),
        );
        // Per axis x: (2^32/1024 - 1) * 1024 < 2^32 fits; in total about 2^76 threads.
        let m = message(check_config_for(
            Platform::Nvidia,
            ThreadIndex::Bits64,
            &c,
            &huge,
            0,
            0,
            0,
            "k",
        ));
        assert!(
            m.contains("a 64-bit thread index wraps past 18446744073709551615"),
            "{m}"
        );
        assert!(
            m.starts_with("grid (4194303, 4194303, 4194303) x block (1024, 1, 1) is "),
            "{m}"
        );
        // The same grid on 32-bit indices passes the per-axis rule (each axis fits): only the total is
        // past a u64, which a 32-bit per-axis index never forms.
        check_config_for(
            Platform::Nvidia,
            ThreadIndex::Bits32,
            &c,
            &huge,
            0,
            0,
            0,
            "k",
        )
        .unwrap();
    }

    #[test]
    fn exactly_u64_max_threads_fit_a_64_bit_index_and_one_block_more_does_not() {
        let huge = Limits {
            max_grid_dim: [u32::MAX; 3],
            ..H100
        };
        // u64::MAX = (2^32 - 1) * 641 * 6700417.
        let fits = LaunchConfig::new((u32::MAX, 641, 6_700_417), 1);
        assert_eq!(threads(&fits), u128::from(u64::MAX));
        check_config_for(
            Platform::Nvidia,
            ThreadIndex::Bits64,
            &fits,
            &huge,
            0,
            0,
            0,
            "k",
        )
        .unwrap();
        let over = LaunchConfig::new((u32::MAX, 641, 6_700_418), 1);
        let m = message(check_config_for(
            Platform::Nvidia,
            ThreadIndex::Bits64,
            &over,
            &huge,
            0,
            0,
            0,
            "k",
        ));
        assert!(m.contains("wraps past 18446744073709551615"), "{m}");
    }

    #[test]
    fn the_fast_path_accepts_only_what_the_full_check_accepts() {
        // Every launch takes `plainly_fits` first: it must never pass a configuration the full check
        // refuses. Extents around each limit (0, 1, the limit, one past it, u32::MAX), over both
        // platforms' rules, kernel thread limits and shared memory on both sides of the per-block limit.
        let small = Limits {
            max_threads_per_block: 256,
            max_block_dim: [256, 8, 4],
            max_grid_dim: [u32::MAX, 3, 2],
            max_shared_mem_per_block: 1000,
            max_shared_mem_optin: 4000,
        };
        let mut accepted = 0;
        for limits in [H100, small] {
            let around = |l: u32| {
                [
                    0,
                    1,
                    2,
                    l.saturating_sub(1),
                    l,
                    l.saturating_add(1),
                    u32::MAX,
                ]
            };
            let (lb, lg) = (limits.max_block_dim, limits.max_grid_dim);
            for bx in around(lb[0]) {
                for by in [0, 1, lb[1], lb[1] + 1] {
                    for bz in [1, lb[2], lb[2] + 1] {
                        for gx in around(lg[0]).into_iter().chain([1 << 22, (1 << 22) - 1]) {
                            for (gy, gz) in [(1, 1), (lg[1], lg[2]), (lg[1] + 1, 1), (1, 0)] {
                                for (kernel, stat, dynamic) in
                                    [(0, 0, 0), (64, 10, 990), (0, 500, 501)]
                                {
                                    let mut c = LaunchConfig::new((gx, gy, gz), (bx, by, bz));
                                    c.shared_mem_bytes = dynamic;
                                    if !plainly_fits(&c, &limits, kernel, stat) {
                                        continue;
                                    }
                                    accepted += 1;
                                    for platform in [Platform::Amd, Platform::Nvidia] {
                                        let full = check_config_full(
                                            platform,
                                            ThreadIndex::Bits32,
                                            &c,
                                            &limits,
                                            kernel,
                                            stat,
                                            0,
                                            "k",
                                        );
                                        assert!(full.is_ok(), "{c:?} {limits:?}: {full:?}");
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        // The sweep reaches the fast path (a check that accepted nothing would prove nothing).
        assert!(accepted > 100, "{accepted}");
        // It takes the plain cases: a kernel whose own thread limit is unknown (0: the device's applies)
        // or above the block.
        let plain = LaunchConfig::new(4, 256);
        assert!(plainly_fits(&plain, &H100, 0, 0));
        assert!(plainly_fits(&plain, &H100, 512, 0));
        // And it falls through where it must: a 64-bit index, a block past the kernel's limit.
        let c = LaunchConfig::new(1, 1024);
        assert!(!plainly_fits(&c, &H100, 512, 0));
        assert!(message(check_config_for(
            Platform::Amd,
            ThreadIndex::Bits32,
            &c,
            &H100,
            512,
            0,
            0,
            "k"
        ))
        .contains("exceeds the limit of 512"));
    }

    fn threads(c: &LaunchConfig) -> u128 {
        c.grid.volume() * c.block.volume()
    }
}
