//! Virtual memory (issue 57, family 3) on a real device: granularity, a `GrowableBuffer` whose contents
//! and address survive growth, a kernel writing into the grown part, growth and drop ordered against a
//! slow kernel on another stream, the raw RAII types (reserve, create, map, access), and pool
//! export/import within one process where the runtime allows it. Ported from AMD's hip-tests
//! (catch/unit/virtualMemoryManagement: hipMemGetAllocationGranularity, hipMemMap's
//! `Unit_hipMemMap_SameMemoryReuse` / `VMMMemoryReuse` (map, set access, copy in and out, a kernel
//! squaring the contents, unmap, repeat), hipMemSetGetAccess; catch/unit/memory/hipMemPoolImportExport's
//! `Negative_Parameters` for a pool that is not shareable). Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use common::device;
use hip::memory::{AddressRange, Granularity, GrowableBuffer, MemAccess, PhysicalMemory};
use hip::prelude::*;
use hip::{Error, KernelArg, LaunchArgs, LaunchConfig};

const SOURCE: &str = r#"
extern "C" __global__ void square(unsigned int* x, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * x[i];
}
extern "C" __global__ void slow_add(int* x, int v, unsigned int n, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {}
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += v;
}
"#;

/// About 1 ms at 2 GHz.
const CYCLES: i64 = 2_000_000;

/// Device 0, where this build has virtual memory management. `None` where the build's headers lack it
/// (HIP's NVIDIA headers before 5.7: build with 5.7.1's, as scripts/bench.sh does), after checking
/// that the entry points say so, naming the call. A device that reports no support fails the test:
/// every GPU these tests run on (H100/H200, MI-series) has it.
fn vmm_device() -> Option<Device> {
    let d = device();
    match d.allocation_granularity(Granularity::Minimum) {
        Err(Error::NotSupported { what, .. }) => {
            assert_eq!(what, "hipMemGetAllocationGranularity");
            let e = GrowableBuffer::<u8>::new(&d, 1).unwrap_err();
            assert!(matches!(e, Error::NotSupported { .. }), "{e}");
            eprintln!("this build has no virtual memory management (HIP headers before 5.7 on NVIDIA): {e}");
            return None;
        }
        r => assert!(r.unwrap() > 0),
    }
    match d.supports_virtual_memory() {
        Ok(true) | Err(Error::NotSupported { .. }) => Some(d),
        other => panic!("device 0 reports no virtual memory management: {other:?}"),
    }
}

fn square(m: &hip::Module, s: &Stream, x: &mut impl KernelArg, n: usize) {
    let f = m.function("square").unwrap();
    let n = n as u32;
    let mut args = LaunchArgs::new();
    args.arg_mut(x).arg(&n);
    // SAFETY: square(unsigned*, unsigned) touches x's first n words.
    unsafe {
        f.launch(s, &LaunchConfig::for_num_elems(n), &mut args)
            .unwrap()
    };
}

fn slow_add(m: &hip::Module, s: &Stream, x: &mut impl KernelArg, v: i32, n: usize) {
    let f = m.function("slow_add").unwrap();
    let n = n as u32;
    let mut args = LaunchArgs::new();
    args.arg_mut(x).arg(&v).arg(&n).arg(&CYCLES);
    // SAFETY: slow_add(int*, int, unsigned, long long) touches x's first n ints.
    unsafe {
        f.launch(s, &LaunchConfig::for_num_elems(n), &mut args)
            .unwrap()
    };
}

#[test]
fn granularity_is_a_power_of_two_and_the_recommended_a_multiple() {
    let Some(d) = vmm_device() else { return };
    let min = d.allocation_granularity(Granularity::Minimum).unwrap();
    let rec = d.allocation_granularity(Granularity::Recommended).unwrap();
    eprintln!("granularity: minimum {min}, recommended {rec}");
    assert!(min.is_power_of_two() && min >= 4096, "{min}");
    assert_eq!(rec % min, 0);
    let b = GrowableBuffer::<u8>::new(&d, 1).unwrap();
    assert_eq!(b.capacity(), min, "one byte reserves one granule");
    assert!(matches!(
        GrowableBuffer::<u64>::new(&d, usize::MAX).unwrap_err(),
        Error::AllocationTooLarge { .. }
    ));
}

#[test]
fn contents_survive_growth_and_a_kernel_writes_the_grown_part() {
    let Some(d) = vmm_device() else { return };
    let m = common::load(&d, SOURCE);
    let s = Stream::non_blocking(&d).unwrap();
    let g = d.allocation_granularity(Granularity::Minimum).unwrap();
    let per = g / 4;
    let first: Vec<u32> = (0..per as u32 + 3).collect();
    let mut b = GrowableBuffer::<u32>::from_slice(&d, 64 * per, &first).unwrap();
    let address = b.device_ptr();
    for step in 1..=8 {
        let old = b.len();
        b.grow_to(old + step * per + 7).unwrap();
        assert_eq!(b.device_ptr(), address);
        // The kernel is told the grown length: it squares old and new elements alike.
        let n = b.len();
        square(&m, &s, &mut b, n);
        let v = b.to_vec().unwrap();
        assert_eq!(v.len(), b.len());
        assert!(v[old..].iter().all(|&x| x == 0), "new elements are zero");
        for (i, &x) in first.iter().enumerate() {
            let expect = (0..step).fold(x, |a, _| a.wrapping_mul(a));
            assert_eq!(v[i], expect, "element {i} after {step} growths");
        }
    }
    assert_eq!(b.access(&d).unwrap(), MemAccess::ReadWrite);
    // Copies between a growable buffer and an ordinary one, both ways.
    let mut plain = DeviceBuffer::<u32>::zeroed(&d, b.len()).unwrap();
    plain.copy_from_device(&b).unwrap();
    b.truncate(0);
    b.extend_from_slice(&[5; 3]).unwrap();
    b.grow_to(plain.len()).unwrap();
    b.slice_mut(3..)
        .unwrap()
        .copy_from_device(&plain.slice(3..).unwrap())
        .unwrap();
    assert_eq!(b.to_vec().unwrap()[3..], plain.to_vec().unwrap()[3..]);
}

/// A slow kernel on stream `a` still adds to the buffer while the host grows it, another stream copies
/// it and the buffer is dropped: every result counts the slow kernel's addition, and the drop unmaps only
/// after it (a use of unmapped memory would fault or read garbage).
#[test]
fn growth_and_drop_are_ordered_after_a_slow_kernel_on_another_stream() {
    let Some(d) = vmm_device() else { return };
    let m = common::load(&d, SOURCE);
    let (a, c) = (
        Stream::non_blocking(&d).unwrap(),
        Stream::non_blocking(&d).unwrap(),
    );
    let per = d.allocation_granularity(Granularity::Minimum).unwrap() / 4;
    for round in 1..=8 {
        let mut b = GrowableBuffer::<i32>::from_slice(&d, 32 * per, &vec![round; per]).unwrap();
        slow_add(&m, &a, &mut b, 1, per);
        b.grow_to(4 * per).unwrap(); // maps while the kernel runs; the memset waits for it
        let mut out = DeviceBuffer::<i32>::zeroed(&d, 4 * per).unwrap();
        c.copy_device_async(&b, &mut out).unwrap();
        slow_add(&m, &a, &mut b, 10, 4 * per);
        drop(b);
        let v = out.to_vec().unwrap();
        assert!(v[..per].iter().all(|&x| x == round + 1), "round {round}");
        assert!(v[per..].iter().all(|&x| x == 0), "round {round}");
    }
    a.synchronize().unwrap();
}

#[test]
fn shrink_waits_for_queued_work_and_growth_maps_again() {
    let Some(d) = vmm_device() else { return };
    let m = common::load(&d, SOURCE);
    let a = Stream::non_blocking(&d).unwrap();
    let g = d.allocation_granularity(Granularity::Minimum).unwrap();
    let per = g / 4;
    let mut b = GrowableBuffer::<i32>::new(&d, 16 * per).unwrap();
    for k in 1..=4 {
        b.grow_to(k * per).unwrap();
    }
    assert_eq!(b.mapped_bytes(), 4 * g);
    slow_add(&m, &a, &mut b, 3, 4 * per);
    b.truncate(per);
    b.shrink_to_fit().unwrap(); // waits for the kernel, then unmaps three chunks
    assert_eq!(b.mapped_bytes(), g);
    assert_eq!(b.to_vec().unwrap(), vec![3; per]);
    b.grow_to(4 * per).unwrap();
    assert!(b.to_vec().unwrap()[per..].iter().all(|&x| x == 0));
}

/// hip-tests' hipMemMap cases with the raw RAII types: map one physical allocation, give access, copy in
/// and out, square it in a kernel, unmap (drop), and map it again at another range.
#[test]
fn raw_reserve_create_map_and_access() {
    let Some(d) = vmm_device() else { return };
    let g = d.allocation_granularity(Granularity::Minimum).unwrap();
    let range = AddressRange::reserve(&d, 3 * g).unwrap();
    assert_eq!(range.size(), 3 * g);
    let e = PhysicalMemory::new(&d, 0).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    let memory = PhysicalMemory::new(&d, g + 1).unwrap();
    assert_eq!(memory.size(), 2 * g, "rounded up to the granularity");
    // SAFETY: `range` is used by nothing else; the mapping drops before the range.
    let e = unsafe { range.map(2 * g, PhysicalMemory::new(&d, 2 * g).unwrap()) }.unwrap_err();
    assert!(matches!(e, Error::OutOfBounds { .. }), "{e}");
    // SAFETY: as above.
    let mapping = unsafe { range.map(0, memory) }.unwrap();
    assert_eq!(mapping.access(&d).unwrap(), MemAccess::ReadWrite);
    let n = mapping.size() / 4;
    let host: Vec<i32> = (0..n as i32).collect();
    // SAFETY: the mapping is n ints of device memory nothing else uses; copies are synchronous.
    unsafe {
        hip::result::memcpy(
            mapping.as_ptr(),
            host.as_ptr().cast(),
            mapping.size(),
            hip::sys::hipMemcpyHostToDevice,
        )
        .unwrap();
        let mut back = vec![0i32; n];
        hip::result::memcpy(
            back.as_mut_ptr().cast(),
            mapping.as_ptr(),
            mapping.size(),
            hip::sys::hipMemcpyDeviceToHost,
        )
        .unwrap();
        assert_eq!(back, host);
    }
    drop(mapping);
}

/// hip-tests' hipMemRetainAllocationHandle / hipMemGetAllocationPropertiesFromHandle cases: the
/// properties a physical allocation was made with; the memory a mapping maps, retained, keeps its
/// contents after the mapping and its own handle are gone and maps again at another range; an address
/// nothing maps is refused naming the call (its code printed).
#[test]
fn retained_memory_outlives_its_mapping_with_its_contents() {
    let Some(d) = vmm_device() else { return };
    let g = d.allocation_granularity(Granularity::Minimum).unwrap();
    let memory = PhysicalMemory::new(&d, g).unwrap();
    let props = memory.properties().unwrap();
    assert_eq!(props.ordinal, d.ordinal());
    assert!(props.pinned && !props.exportable_as_fd, "{props:?}");
    #[cfg(unix)]
    assert!(
        PhysicalMemory::new_shareable(&d, g)
            .unwrap()
            .properties()
            .unwrap()
            .exportable_as_fd
    );
    let (a, b) = (
        AddressRange::reserve(&d, g).unwrap(),
        AddressRange::reserve(&d, g).unwrap(),
    );
    // SAFETY: nothing else uses the ranges; each mapping drops before its range; copies are synchronous.
    let mapping = unsafe { a.map(0, memory) }.unwrap();
    let n = g / 4;
    let host: Vec<i32> = (0..n as i32).map(|i| i * 3 - 7).collect();
    // SAFETY: the mapping is n ints of device memory nothing else uses; the copy is synchronous.
    unsafe {
        hip::result::memcpy(
            mapping.as_ptr(),
            host.as_ptr().cast(),
            g,
            hip::sys::hipMemcpyHostToDevice,
        )
        .unwrap();
    }
    let retained = mapping.retain_physical().unwrap();
    assert_eq!(
        (retained.size(), retained.properties().unwrap()),
        (g, props)
    );
    drop(mapping);
    // SAFETY: as above.
    let again = unsafe { b.map(0, retained) }.unwrap();
    let mut back = vec![0i32; n];
    // SAFETY: as above.
    unsafe {
        hip::result::memcpy(
            back.as_mut_ptr().cast(),
            again.as_ptr(),
            g,
            hip::sys::hipMemcpyDeviceToHost,
        )
        .unwrap();
    }
    assert_eq!(back, host, "the retained memory kept its contents");
    let mut word = 0u64;
    let e = hip::result::vmm_query::retain(&mut word as *mut u64 as usize).unwrap_err();
    println!("retain of a host address: {e}");
    assert!(
        e.to_string().contains("hipMemRetainAllocationHandle"),
        "{e}"
    );
}

/// hipMemPoolImportExport's negative cases: a pool not made shareable cannot be exported; memory not
/// from a pool cannot be exported as a pool pointer. Then a shareable pool exports a descriptor and a
/// buffer's data (importing needs another process: tests/gpu_ipc.rs's two-process pattern, not here).
#[test]
fn pool_export_refusals_and_a_shareable_pool() {
    let d = device();
    let s = Stream::non_blocking(&d).unwrap();
    let plain = match hip::MemPool::new(&d) {
        Ok(p) => p,
        Err(Error::NotSupported { .. }) => return,
        Err(e) => panic!("{e}"),
    };
    let e = plain.export_fd().unwrap_err();
    assert!(
        e.to_string().contains("hipMemPoolExportToShareableHandle"),
        "{e}"
    );
    let default = hip::MemPool::default_for(&d).unwrap();
    assert!(matches!(
        default.export_fd().unwrap_err(),
        Error::InvalidArgument { .. }
    ));
    let x = DeviceBuffer::<f32>::zeroed(&d, 16).unwrap();
    assert!(matches!(
        plain.export_pointer(&x).unwrap_err(),
        Error::InvalidArgument { .. }
    ));
    let shared = match hip::MemPool::new_shareable(&d) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("no shareable pools here: {e}");
            return;
        }
    };
    let fd = shared.export_fd().unwrap();
    let y = shared.zeroed::<f32>(&s, 1024).unwrap();
    s.synchronize().unwrap();
    let export = shared.export_pointer(&y).unwrap();
    assert_eq!(export.bytes().len(), 64);
    drop(y); // the guard keeps the memory
    drop((export, fd));
}
