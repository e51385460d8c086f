//! Unit tests (no GPU).

use super::*;

const LIMITS: Limits = Limits {
    max_threads_per_block: 1024,
    max_block_dim: [1024, 1024, 1024],
    max_grid_dim: [u32::MAX, u32::MAX, u32::MAX],
    max_shared_mem_per_block: 65536,
    max_shared_mem_optin: 65536,
};

fn check(c: LaunchConfig, kernel_max: u32, static_shared: u32) -> Result<()> {
    check_config(&c, &LIMITS, kernel_max, static_shared, 0, "k")
}

fn refused(c: LaunchConfig, static_shared: u32, says: &str) {
    match check(c, 0, static_shared) {
        Err(Error::InvalidLaunch(m)) => assert!(m.contains(says), "{c:?}: {m}"),
        other => panic!("{c:?}: {other:?}"),
    }
}

/// Device memory as a launch argument: an address (8 bytes) in a tracked allocation.
struct Mem {
    alloc: Arc<Allocation>,
    address: u64,
}

impl Mem {
    fn new() -> Mem {
        Mem {
            alloc: Allocation::new(
                std::ptr::null_mut(),
                &crate::Device::for_unit_tests(0),
                crate::memory::tracking::Release::Nothing,
            ),
            address: 0x1000,
        }
    }
}

// SAFETY: points at the address it holds, as this crate's buffers do.
unsafe impl KernelArg for Mem {
    fn as_kernel_param(&self) -> *mut c_void {
        std::ptr::addr_of!(self.address) as *mut c_void
    }
    fn kernel_param_size(&self) -> usize {
        8
    }
    fn is_device_pointer(&self) -> bool {
        true
    }
    fn allocation(&self) -> Option<&Arc<Allocation>> {
        Some(&self.alloc)
    }
}

fn param(args: &mut LaunchArgs<'_>, i: usize) -> *mut c_void {
    // SAFETY: entry i < len was written by `arg`.
    unsafe { *args.params_ptr().add(i) }
}

#[test]
fn values_are_passed_by_address_with_their_size() {
    let (a, b, c) = (1u32, 2u64, [7u8; 3]);
    assert_eq!(a.kernel_param_size(), 4);
    assert!(!a.is_device_pointer());
    assert!(KernelArg::allocation(&a).is_none());
    assert_eq!(a.as_kernel_param(), std::ptr::addr_of!(a) as *mut c_void);
    let mut args = LaunchArgs::new();
    assert_eq!((args.len(), args.is_empty()), (0, true));
    args.arg(&a).arg(&b).arg(&c);
    assert_eq!((args.len(), args.is_empty()), (3, false));
    assert_eq!(
        args.infos(),
        [
            ArgInfo {
                size: 4,
                pointer: false
            },
            ArgInfo {
                size: 8,
                pointer: false
            },
            ArgInfo {
                size: 3,
                pointer: false
            },
        ]
    );
    assert_eq!(param(&mut args, 0), std::ptr::addr_of!(a) as *mut c_void);
    assert_eq!(param(&mut args, 1), std::ptr::addr_of!(b) as *mut c_void);
    assert_eq!(param(&mut args, 2), std::ptr::addr_of!(c) as *mut c_void);
    // Values are not memory the launch is ordered by.
    assert_eq!((args.uses, args.writes), (0, 0));
    assert!(!args.overflow);
}

#[test]
fn memory_arguments_are_tracked_as_reads_or_writes_in_order() {
    let (m0, mut m1, m2, untracked) = (Mem::new(), Mem::new(), Mem::new(), Mem::new());
    let n = 5u32;
    let allocs = [&m0.alloc, &m1.alloc, &m2.alloc].map(|a| a as *const Arc<Allocation>);
    let m1_address = std::ptr::addr_of!(m1.address) as *mut c_void;
    let mut args = LaunchArgs::new();
    args.arg(&m0).arg(&n).arg_mut(&mut m1).arg(&m2);
    // SAFETY: nothing is launched.
    unsafe { args.arg_untracked(&untracked) };
    assert_eq!(args.len(), 5);
    assert_eq!(
        args.infos(),
        [
            ArgInfo {
                size: 8,
                pointer: true
            },
            ArgInfo {
                size: 4,
                pointer: false
            },
            ArgInfo {
                size: 8,
                pointer: true
            },
            ArgInfo {
                size: 8,
                pointer: true
            },
            ArgInfo {
                size: 8,
                pointer: true
            },
        ]
    );
    // Three tracked uses, the second one a write; the untracked argument is not among them.
    assert_eq!(args.uses, 3);
    assert_eq!(args.writes, 0b010);
    use crate::memory::Access::{Read, Write};
    assert_eq!([0, 1, 2].map(|i| args.access(i)), [Read, Write, Read]);
    for (i, alloc) in allocs.into_iter().enumerate() {
        // SAFETY: entries ..uses were written by `push`.
        let tracked = unsafe { args.tracked[i].assume_init() };
        assert!(std::ptr::eq(tracked, alloc), "use {i}");
    }
    assert_eq!(param(&mut args, 2), m1_address);
}

#[test]
fn thirty_two_arguments_fit_and_one_more_is_an_overflow() {
    let ms: Vec<Mem> = (0..MAX_KERNEL_ARGS).map(|_| Mem::new()).collect();
    let mut writes: Vec<Mem> = (0..MAX_KERNEL_ARGS).map(|_| Mem::new()).collect();
    let mut args = LaunchArgs::new();
    for (i, (r, w)) in ms.iter().zip(&mut writes).enumerate() {
        if i % 2 == 0 {
            args.arg(r);
        } else {
            args.arg_mut(w);
        }
    }
    assert_eq!((args.len(), args.uses, args.overflow), (32, 32, false));
    assert_eq!(args.writes, 0xAAAA_AAAA, "the 32nd use sets bit 31");
    let extra = 1u8;
    args.arg(&extra);
    assert_eq!((args.len(), args.uses, args.overflow), (32, 32, true));
}

#[test]
fn a_size_past_u32_is_recorded_as_u32_max() {
    struct Huge;
    // SAFETY: never launched.
    unsafe impl KernelArg for Huge {
        fn as_kernel_param(&self) -> *mut c_void {
            std::ptr::null_mut()
        }
        fn kernel_param_size(&self) -> usize {
            usize::MAX
        }
    }
    let mut args = LaunchArgs::new();
    args.arg(&Huge);
    assert_eq!(
        args.infos(),
        [ArgInfo {
            size: u32::MAX,
            pointer: false
        }]
    );
}

#[test]
fn arguments_are_checked_against_a_signature() {
    use crate::code_object::{Kernel, Param, ParamKind};
    let p = |size, kind| Param {
        name: None,
        offset: 0,
        size,
        align: None,
        kind,
        value_kind: "v".into(),
        address_space: None,
        type_name: None,
    };
    let sig = Signature::new(Kernel {
        name: "k".into(),
        params: vec![p(8, ParamKind::Pointer), p(4, ParamKind::Value)],
        ..Kernel::default()
    });
    let (m, n, wide) = (Mem::new(), 3u32, 3u64);
    let mut args = LaunchArgs::new();
    args.arg(&m).arg(&n);
    args.check(&sig).unwrap();
    let mut args = LaunchArgs::new();
    args.arg(&m).arg(&wide);
    assert!(matches!(
        args.check(&sig),
        Err(Error::ArgumentMismatch { index: 1, .. })
    ));
    let mut args = LaunchArgs::new();
    args.arg(&n).arg(&n);
    assert!(matches!(
        args.check(&sig),
        Err(Error::ArgumentMismatch { index: 0, .. })
    ));
}

#[test]
fn volume_is_exact_at_the_extremes() {
    let max = Dim3::from((u32::MAX, u32::MAX, u32::MAX));
    assert_eq!(
        max.volume(),
        (1u128 << 96) - 3 * (1u128 << 64) + 3 * (1u128 << 32) - 1
    );
    assert_eq!(Dim3::from((u32::MAX, 0, u32::MAX)).volume(), 0);
    assert_eq!(Dim3::from(u32::MAX).volume(), u128::from(u32::MAX));
}

#[test]
fn extreme_configurations_are_refused_without_panicking() {
    let m = u32::MAX;
    // Work-items per axis (grid x block) must fit in 32 bits on AMD (the dispatch packet) and, for a
    // kernel with 32-bit indices (what Function::launch assumes), on NVIDIA too (launch/check.rs tests
    // the 64-bit rules).
    let work_items = |c: LaunchConfig| refused(c, 0, "along");
    work_items(LaunchConfig::new((m, m, m), 64));
    refused(LaunchConfig::new((m, m, m), (m, m, m)), 0, "block");
    refused(LaunchConfig::new(1, (1024, 1024, 1024)), 0, "threads");
    refused(LaunchConfig::new((0, m, m), 64), 0, "empty");
    refused(LaunchConfig::new(1, (m, 0, 1)), 0, "empty");
    work_items(LaunchConfig::new(m, 2));
    work_items(LaunchConfig::new((1, m, 1), (1, 2, 1)));
    work_items(LaunchConfig::new(LaunchConfig::for_num_elems(m).grid, 256));
    // A device's own grid limits apply on both platforms (an NVIDIA GPU's: 2^31-1 x 65535 x 65535).
    let nvidia_like = Limits {
        max_grid_dim: [i32::MAX as u32, 65535, 65535],
        ..LIMITS
    };
    match check_config(
        &LaunchConfig::new((1, m, 1), (1, 2, 1)),
        &nvidia_like,
        0,
        0,
        0,
        "k",
    ) {
        Err(Error::InvalidLaunch(msg)) => assert!(msg.contains("grid limits"), "{msg}"),
        other => panic!("{other:?}"),
    }
    let huge_shared = LaunchConfig {
        shared_mem_bytes: m,
        ..LaunchConfig::new(1, 1)
    };
    refused(huge_shared, m, "shared");
}

#[test]
fn static_plus_dynamic_shared_memory_is_checked_together() {
    let c = LaunchConfig {
        shared_mem_bytes: 60_000,
        ..LaunchConfig::new(1, 64)
    };
    assert!(check(c, 0, 5536).is_ok());
    refused(c, 5537, "5537 bytes of static");
}

#[test]
fn the_kernel_thread_limit_applies() {
    assert!(check(LaunchConfig::new(1, 256), 256, 0).is_ok());
    match check(LaunchConfig::new(1, 257), 256, 0) {
        Err(Error::InvalidLaunch(m)) => assert_eq!(
            m,
            "block of 257 threads exceeds the limit of 256 for kernel `k`"
        ),
        other => panic!("{other:?}"),
    }
    assert!(check(LaunchConfig::new(m_grid(), 1), 0, 0).is_ok());
    // 0 is "unknown": the device's limit alone applies; a kernel limit above the device's does not
    // raise it.
    assert!(check(LaunchConfig::new(1, 1024), 0, 0).is_ok());
    assert!(check(LaunchConfig::new(1, (32, 32, 1)), 2048, 0).is_ok());
    match check(LaunchConfig::new(1, (32, 32, 2)), 2048, 0) {
        Err(Error::InvalidLaunch(m)) => {
            assert!(m.contains("2048 threads exceeds the limit of 1024"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

/// Limits with grid extents that bite (NVIDIA's: 2^31 - 1 along x, 65535 along y and z) and block
/// extents smaller than the thread limit along y and z (as every device has).
const SMALL: Limits = Limits {
    max_threads_per_block: 1024,
    max_block_dim: [1024, 512, 64],
    max_grid_dim: [i32::MAX as u32, 65535, 65535],
    max_shared_mem_per_block: 49152,
    max_shared_mem_optin: 232448,
};

fn small(c: LaunchConfig) -> Result<()> {
    check_config(&c, &SMALL, 0, 0, 0, "k")
}

fn small_refused(c: LaunchConfig, message: &str) {
    match small(c) {
        Err(e @ Error::InvalidLaunch(_)) => {
            assert_eq!(
                e.to_string(),
                format!("invalid launch configuration: {message}")
            );
            assert_eq!(e.status(), crate::Status::InvalidArgument);
        }
        other => panic!("{c:?}: {other:?}"),
    }
}

#[test]
fn each_grid_extent_is_checked_against_the_devices_limit() {
    let x = i32::MAX as u32;
    small(LaunchConfig::new((x, 65535, 65535), 1)).unwrap();
    let limits = "[2147483647, 65535, 65535]";
    small_refused(
        LaunchConfig::new((x + 1, 1, 1), 1),
        &format!("grid (2147483648, 1, 1) exceeds the device's grid limits {limits}"),
    );
    small_refused(
        LaunchConfig::new((1, 65536, 1), 1),
        &format!("grid (1, 65536, 1) exceeds the device's grid limits {limits}"),
    );
    small_refused(
        LaunchConfig::new((1, 1, 65536), 1),
        &format!("grid (1, 1, 65536) exceeds the device's grid limits {limits}"),
    );
    small_refused(
        LaunchConfig::new((u32::MAX, u32::MAX, u32::MAX), 1),
        &format!(
            "grid (4294967295, 4294967295, 4294967295) exceeds the device's grid limits {limits}"
        ),
    );
}

#[test]
fn each_block_extent_is_checked_against_the_devices_limit() {
    small(LaunchConfig::new(1, (1024, 1, 1))).unwrap();
    small(LaunchConfig::new(1, (1, 512, 1))).unwrap();
    small(LaunchConfig::new(1, (1, 1, 64))).unwrap();
    small(LaunchConfig::new(1, (2, 8, 64))).unwrap();
    let limits = "[1024, 512, 64]";
    for (block, shown) in [
        ((1025, 1, 1), "(1025, 1, 1)"),
        ((1, 513, 1), "(1, 513, 1)"),
        ((1, 1, 65), "(1, 1, 65)"),
    ] {
        small_refused(
            LaunchConfig::new(1, block),
            &format!("block {shown} exceeds the device's block limits {limits}"),
        );
    }
    // Inside every extent, but more threads than a block may have.
    small_refused(
        LaunchConfig::new(1, (16, 16, 8)),
        "block of 2048 threads exceeds the limit of 1024 for kernel `k`",
    );
}

#[test]
fn an_empty_grid_or_block_is_refused_along_any_axis() {
    for (grid, block) in [
        ((0, 1, 1), (1, 1, 1)),
        ((1, 0, 1), (1, 1, 1)),
        ((1, 1, 0), (1, 1, 1)),
        ((1, 1, 1), (0, 1, 1)),
        ((1, 1, 1), (1, 0, 1)),
        ((1, 1, 1), (1, 1, 0)),
    ] {
        let c = LaunchConfig::new(grid, block);
        small_refused(
            c,
            &format!("empty grid {:?} or block {:?}", c.grid, c.block),
        );
    }
    small(LaunchConfig::new(1, 1)).unwrap();
}

/// One block of 64 threads asking `dynamic` bytes of shared memory, of a kernel `k` with
/// `static_shared` bytes of its own that opted in to `opt_in` dynamic bytes.
fn with_shared(limits: &Limits, dynamic: u32, static_shared: u32, opt_in: u32) -> Result<()> {
    let c = LaunchConfig {
        shared_mem_bytes: dynamic,
        ..LaunchConfig::new(1, 64)
    };
    check_config(&c, limits, 0, static_shared, opt_in, "k")
}

#[test]
fn shared_memory_above_the_default_limit_needs_the_kernel_opt_in_and_stays_under_the_device_maximum(
) {
    let at = |dynamic, static_shared, opt_in| with_shared(&SMALL, dynamic, static_shared, opt_in);
    // Opted in to 64 KiB: 64 KiB launches, one byte more does not.
    at(65536, 0, 65536).unwrap();
    at(49153, 0, 65536).unwrap();
    match at(65537, 0, 65536) {
        Err(Error::InvalidLaunch(m)) => assert_eq!(
            m,
            "65537 bytes of dynamic plus 0 bytes of static shared memory (kernel `k`) exceed the \
             device's 49152 bytes per block; kernel `k` has opted in to 65536 bytes of dynamic \
             shared memory: Function::set_max_dynamic_shared_bytes raises that, up to 232448 on this \
             device"
        ),
        other => panic!("{other:?}"),
    }
    // The device's opt-in maximum holds whatever the kernel's setting says; static counts in it.
    at(232448, 0, 232448).unwrap();
    assert!(at(232449, 0, u32::MAX).is_err());
    at(232448 - 1024, 1024, 232448).unwrap();
    assert!(at(232448 - 1023, 1024, 232448).is_err());
    // Without an opt-in the default limit stands.
    assert!(at(49153, 0, 0).is_err());
    // Where the device has no opt-in (AMD), nothing is said of one.
    match with_shared(&LIMITS, 65537, 0, u32::MAX) {
        Err(Error::InvalidLaunch(m)) => assert_eq!(
            m,
            "65537 bytes of dynamic plus 0 bytes of static shared memory (kernel `k`) exceed the \
             device's 65536 bytes per block"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn shared_memory_up_to_the_limit_is_accepted_and_one_byte_more_refused() {
    let at = |dynamic, static_shared| with_shared(&SMALL, dynamic, static_shared, 0);
    at(49152, 0).unwrap();
    at(0, 49152).unwrap();
    at(49152 - 100, 100).unwrap();
    match at(49152 - 100, 101) {
        Err(Error::InvalidLaunch(m)) => assert_eq!(
            m,
            "49052 bytes of dynamic plus 101 bytes of static shared memory (kernel `k`) exceed the \
             device's 49152 bytes per block; kernel `k` has opted in to 0 bytes of dynamic shared \
             memory: Function::set_max_dynamic_shared_bytes raises that, up to 232347 on this device"
        ),
        other => panic!("{other:?}"),
    }
    // Both at their maximum: the sum is taken in 64 bits.
    assert!(matches!(
        at(u32::MAX, u32::MAX),
        Err(Error::InvalidLaunch(_))
    ));
}

/// AMD: grid x block along one axis must fit in 32 bits (HIP multiplies them in a u32).
#[cfg(hip_platform = "amd")]
#[test]
fn work_items_up_to_u32_max_per_axis_are_accepted_on_amd() {
    // 16843009 * 255 = 2^32 - 1 exactly.
    let fits = [(16_843_009u32, 255u32)];
    for (g, b) in fits {
        assert_eq!(u64::from(g) * u64::from(b), u64::from(u32::MAX));
        check(LaunchConfig::new(g, b), 0, 0).unwrap();
        check(LaunchConfig::new((1, g, 1), (1, b, 1)), 0, 0).unwrap();
        check(LaunchConfig::new((1, 1, g), (1, 1, b)), 0, 0).unwrap();
    }
    // One block more is one work-item too many along that axis.
    match check(LaunchConfig::new(16_843_010, 255), 0, 0) {
        Err(Error::InvalidLaunch(m)) => assert_eq!(
            m,
            "grid 16843010 x block 255 along x is 4294967550 work-items; AMD devices take at most \
             4294967295"
        ),
        other => panic!("{other:?}"),
    }
    refused(
        LaunchConfig::new((1, 1, 16_843_010), (1, 1, 255)),
        0,
        "along z",
    );
}

fn m_grid() -> u32 {
    u32::MAX
}

#[test]
fn for_num_elems_covers_every_element_at_the_extremes() {
    for n in [0, 1, 255, 256, 257, u32::MAX - 1, u32::MAX] {
        let c = LaunchConfig::for_num_elems(n);
        assert!(c.grid.volume() * c.block.volume() >= u128::from(n));
        assert!(c.grid.x >= 1);
        // The same count held as usize or u64 gives the same configuration.
        assert_eq!(LaunchConfig::for_num_elems(n as usize), c);
        assert_eq!(LaunchConfig::for_num_elems(u64::from(n)), c);
    }
    // Past u32::MAX blocks the grid saturates, and the launch check refuses it.
    let n = u64::from(u32::MAX) * 256 + 1;
    let c = LaunchConfig::for_num_elems(n);
    assert_eq!(c.grid.x, u32::MAX);
    assert_eq!(
        LaunchConfig::for_num_elems(u64::from(u32::MAX) * 256)
            .grid
            .x,
        u32::MAX
    );
    assert_eq!(
        LaunchConfig::for_num_elems(u64::from(u32::MAX - 1) * 256)
            .grid
            .x,
        u32::MAX - 1
    );
    assert!(matches!(
        check_config(&c, &SMALL, 0, 0, 0, "k"),
        Err(Error::InvalidLaunch(_))
    ));
    assert_eq!(blocks_for(10, 0), 10, "a zero block counts as one thread");
    // Literals are i32; a negative count covers nothing (one block, as for 0).
    assert_eq!(LaunchConfig::for_num_elems(1000).grid.x, 4);
    assert_eq!(LaunchConfig::for_num_elems(-5).grid.x, 1);
}

#[test]
fn uses_are_ordered_by_allocation_address_whatever_the_argument_order() {
    let ms: Vec<Mem> = (0..4).map(|_| Mem::new()).collect();
    let addr = |m: &Mem| Arc::as_ptr(&m.alloc) as usize;
    // Every order of two and of three arguments (three takes the sort, two the single comparison).
    for picks in [
        vec![0, 1],
        vec![1, 0],
        vec![2, 0, 1],
        vec![1, 2, 0],
        vec![3, 1, 2, 0],
    ] {
        let mut args = LaunchArgs::new();
        for &p in &picks {
            args.arg(&ms[p]);
        }
        let order = args.use_order();
        let seen: Vec<usize> = order[..picks.len()]
            .iter()
            .map(|&i| addr(&ms[picks[usize::from(i)]]))
            .collect();
        let mut sorted = seen.clone();
        sorted.sort_unstable();
        assert_eq!(seen, sorted, "arguments {picks:?}");
        // Each argument once.
        let mut idx: Vec<u8> = order[..picks.len()].to_vec();
        idx.sort_unstable();
        assert_eq!(idx, (0..picks.len() as u8).collect::<Vec<_>>());
    }
}

#[test]
fn mapped_pinned_memory_is_a_device_address_in_its_allocation() {
    let alloc = Mem::new().alloc;
    let address = std::ptr::without_provenance_mut::<c_void>(0x2000);
    let m = crate::memory::MappedPinned::<u32>::for_unit_tests(&alloc, address, 16);
    assert_eq!(
        (m.len(), m.is_empty(), m.device_ptr()),
        (16, false, address)
    );
    assert_eq!(m.kernel_param_size(), 8);
    assert!(m.is_device_pointer());
    assert!(Arc::ptr_eq(KernelArg::allocation(&m).unwrap(), &alloc));
    // SAFETY: the parameter points at the stored address, a pointer.
    let param = unsafe { *(m.as_kernel_param() as *const *mut c_void) };
    assert_eq!(param, address);
    let mut args = LaunchArgs::new();
    args.arg(&m);
    assert_eq!(
        args.infos(),
        [ArgInfo {
            size: 8,
            pointer: true
        }]
    );
}
