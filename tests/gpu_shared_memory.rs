//! Dynamic shared memory above the default limit (the per-kernel opt-in), the occupancy calculator with a
//! block-size-dependent shared size, and the launch check following the kernel's setting, on a real
//! device. Compiled only with `--features gpu`.
#![cfg(feature = "gpu")]
mod common;

use hip::prelude::*;

use common::device;

/// Each block writes every byte of its `bytes` of dynamic shared memory, then reads the bytes another
/// thread wrote: `out[0]` counts wrong bytes, `out[1]` the bytes checked.
const TOUCH: &str = r#"
extern "C" __global__ void touch(unsigned int* out, unsigned int bytes) {
    extern __shared__ unsigned char s[];
    for (unsigned int i = threadIdx.x; i < bytes; i += blockDim.x) s[i] = (unsigned char)(i * 7u + blockIdx.x);
    __syncthreads();
    unsigned int wrong = 0, seen = 0;
    for (unsigned int i = threadIdx.x; i < bytes; i += blockDim.x) {
        unsigned int j = bytes - 1u - i;
        if (s[j] != (unsigned char)(j * 7u + blockIdx.x)) wrong++;
        seen++;
    }
    atomicAdd(&out[0], wrong);
    atomicAdd(&out[1], seen);
}
"#;

/// Launch `touch` with `bytes` of dynamic shared memory on 3 blocks of 256 threads; Ok((wrong, seen)).
fn touch(f: &Function, s: &Stream, bytes: usize) -> Result<(u32, u32)> {
    let d = f.module().device();
    let mut out = DeviceBuffer::from_slice(d, &[u32::MAX, 0])?;
    out.memset_bytes(0)?;
    let b = bytes as u32;
    let mut args = LaunchArgs::new();
    args.arg_mut(&mut out).arg(&b);
    let config = LaunchConfig {
        shared_mem_bytes: b,
        ..LaunchConfig::new(3, 256)
    };
    unsafe { f.launch(s, &config, &mut args)? };
    let v = out.to_vec()?;
    Ok((v[0], v[1]))
}

#[test]
fn shared_memory_above_48_kib_after_the_opt_in_and_one_byte_more_refused() {
    let d = device();
    let m = common::load(&d, TOUCH);
    let f = m.function("touch").unwrap();
    let s = Stream::new(&d).unwrap();
    let per_block = d.max_shared_mem_per_block();
    let optin = d.max_shared_mem_per_block_optin();
    let static_shared = f.static_shared_bytes() as usize;
    assert!(optin >= per_block, "{optin} < {per_block}");
    if hip::PLATFORM == "nvidia" {
        // Every NVIDIA GPU since Volta lets a kernel opt in to more than the plain 48 KiB.
        assert!(optin > per_block, "opt-in {optin}, plain {per_block}");
    }
    assert_eq!(
        f.max_dynamic_shared_bytes().unwrap(),
        per_block - static_shared
    );
    // Up to the plain limit: no opt-in needed.
    assert_eq!(touch(&f, &s, per_block).unwrap(), (0, 3 * per_block as u32));
    if optin > per_block {
        // NVIDIA (Hopper: 48 KiB plain, about 227 KiB opted in): 64 KiB is refused until the kernel
        // opts in, with the numbers and the call that raises it.
        match touch(&f, &s, 65536) {
            Err(Error::InvalidLaunch(msg)) => assert!(
                msg.contains("65536 bytes of dynamic")
                    && msg.contains(&format!("{per_block} bytes per block"))
                    && msg.contains("set_max_dynamic_shared_bytes"),
                "{msg}"
            ),
            other => panic!("64 KiB before the opt-in: {other:?}"),
        }
        f.set_max_dynamic_shared_bytes(65536).unwrap();
        assert_eq!(f.max_dynamic_shared_bytes().unwrap(), 65536);
        assert_eq!(touch(&f, &s, 65536).unwrap(), (0, 3 * 65536));
        // A second Function of the same kernel sees the setting (it belongs to the kernel).
        let again = m.function("touch").unwrap();
        assert_eq!(touch(&again, &s, 65536).unwrap(), (0, 3 * 65536));
        assert!(touch(&f, &s, 65537).is_err(), "above the kernel's setting");
    } else {
        // AMD: no opt-in; the device's limit is the plain one.
        assert_eq!(f.max_dynamic_shared_bytes().unwrap(), optin - static_shared);
    }
    // The device maximum: the opt-in accepts it, the kernel computes right with all of it.
    let max = optin - static_shared;
    f.set_max_dynamic_shared_bytes(max).unwrap();
    assert_eq!(touch(&f, &s, max).unwrap(), (0, 3 * max as u32));
    // One byte more: refused by the setter and by the launch, each with the numbers.
    match f.set_max_dynamic_shared_bytes(max + 1) {
        Err(Error::InvalidArgument { reason, .. }) => {
            assert!(
                reason.contains(&format!("{optin} bytes per block")),
                "{reason}"
            )
        }
        other => panic!("{other:?}"),
    }
    match touch(&f, &s, max + 1) {
        Err(Error::InvalidLaunch(msg)) => {
            assert!(
                msg.contains(&format!("{} bytes of dynamic", max + 1)),
                "{msg}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert!(f.set_max_dynamic_shared_bytes(usize::MAX).is_err());
    // Hints: in range accepted, out of range refused.
    f.set_preferred_shared_carveout(100).unwrap();
    f.set_preferred_shared_carveout(-1).unwrap();
    assert!(f.set_preferred_shared_carveout(101).is_err());
    assert!(f.set_preferred_shared_carveout(-2).is_err());
    f.set_cache_config(hip::FuncCache::PreferShared).unwrap();
    assert_eq!(touch(&f, &s, 1024).unwrap(), (0, 3 * 1024));
}

#[test]
fn occupancy_with_shared_memory_that_grows_with_the_block() {
    let d = device();
    let m = common::load(&d, TOUCH);
    let f = m.function("touch").unwrap();
    let s = Stream::new(&d).unwrap();
    let per_thread = 64usize;
    let shared = |block: u32| block as usize * per_thread;
    let sug = f.suggested_block_size_with(shared, 0).unwrap();
    let warp = d.attribute(hip::sys::hipDeviceAttributeWarpSize).unwrap() as u32;
    let sms = d
        .attribute(hip::sys::hipDeviceAttributeMultiprocessorCount)
        .unwrap() as u32;
    assert_eq!(sug.block_size % warp, 0, "{sug:?}");
    assert_eq!(sug.dynamic_shared_bytes, shared(sug.block_size));
    let threads = |b: u32| {
        let bytes = shared(b);
        if bytes + f.static_shared_bytes() as usize > d.max_shared_mem_per_block_optin() {
            return 0;
        }
        f.max_active_blocks_per_multiprocessor(b, bytes).unwrap() * b
    };
    let active = f
        .max_active_blocks_per_multiprocessor(sug.block_size, sug.dynamic_shared_bytes)
        .unwrap();
    assert!(active > 0);
    assert_eq!(sug.min_grid_size, active * sms);
    let best = threads(sug.block_size);
    for b in (warp..=1024).step_by(warp as usize) {
        assert!(
            threads(b) <= best,
            "block {b} holds more threads than {sug:?}"
        );
    }
    // A limit is obeyed; a shared size no block fits is a clear error.
    assert!(f.suggested_block_size_with(shared, 64).unwrap().block_size <= 64);
    match f.suggested_block_size_with(|_| usize::MAX, 0) {
        Err(Error::InvalidArgument { reason, .. }) => {
            assert!(reason.contains("no block size fits"))
        }
        other => panic!("{other:?}"),
    }
    // The suggestion launches (after the opt-in where its shared size needs one) and computes right.
    f.set_max_dynamic_shared_bytes(sug.dynamic_shared_bytes)
        .unwrap();
    let c = sug.config_for(10_000usize).unwrap();
    assert_eq!(c.block.x, sug.block_size);
    assert_eq!(c.shared_mem_bytes as usize, sug.dynamic_shared_bytes);
    assert_eq!(
        touch(&f, &s, sug.dynamic_shared_bytes).unwrap(),
        (0, 3 * sug.dynamic_shared_bytes as u32)
    );
}
