//! The new calls on any machine: the staging switch, and the runtime's own error where no device exists.
use hip::memory::staging::{self, StagingConfig};
use hip::Device;

#[test]
fn staging_is_configurable_and_off_with_one_setting() {
    let default = staging::config();
    // A copying thread per core, up to 16 (the 2-core CI machine gets 2, a 16-core GPU host 16).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(default.threads, cores.clamp(1, 16), "{default:?}");
    assert!(default.buffers >= 2 && default.chunk_bytes >= 64 << 10);
    assert!(default.threshold_bytes >= default.chunk_bytes);
    staging::set_config(StagingConfig::disabled());
    assert!(!staging::config().enabled);
    staging::set_config(StagingConfig {
        threads: 1000,
        buffers: 1,
        ..default
    });
    let c = staging::config();
    assert_eq!((c.threads, c.buffers), (16, 2), "capped and sanitised");
    staging::set_config(default);
    assert_eq!(staging::config(), default);
}

#[test]
fn pool_calls_answer_with_the_runtime_error_or_a_value() {
    let pool = hip::result::pool::device_default_mem_pool(0);
    match Device::count() {
        Ok(_) => {
            let d = Device::get(0).unwrap();
            let pools = d
                .attribute(hip::sys::hipDeviceAttributeMemoryPoolsSupported)
                .unwrap();
            assert_eq!(pool.is_ok(), pools != 0, "{pool:?}");
        }
        Err(_) => {
            let err = pool.unwrap_err();
            assert!(
                err.to_string().contains("hipDeviceGetDefaultMemPool"),
                "{err}"
            );
            // The runtime's own answer, kept raw: device 0 does not exist. Measured on Debian's HIPs:
            // hipErrorInvalidDevice (101) from 5.2.3, and from 5.7.1 when this is the process's first HIP
            // call; hipErrorNoDevice (100) from 5.7.1 after hipGetDeviceCount, and from 6.4.3 and 7.2.4.
            let name = err.hip_code().and_then(|c| c.name());
            assert!(
                matches!(name, Some("hipErrorInvalidDevice" | "hipErrorNoDevice")),
                "{err}"
            );
        }
    }
}

/// Pools of one's own and the device's current pool through the raw layer: without a device each call
/// answers the runtime's own error, naming the call; with one, a pool is made, is empty, and goes.
#[test]
fn own_pool_calls_answer_with_the_runtime_error_or_a_pool() {
    let created = hip::result::pool::mem_pool_create(0);
    let current = hip::result::pool::device_get_mem_pool(0);
    match Device::count() {
        Ok(_) => {
            let pool = hip::MemPool::new(&Device::get(0).unwrap()).unwrap();
            assert_eq!(pool.used_bytes().unwrap(), 0);
            assert!(current.is_ok(), "{current:?}");
            // SAFETY: made just above, not used again.
            unsafe { hip::result::pool::mem_pool_destroy(created.unwrap()) }.unwrap();
        }
        Err(_) => {
            for (err, call) in [
                (created.unwrap_err(), "hipMemPoolCreate"),
                (current.unwrap_err(), "hipDeviceGetMemPool"),
            ] {
                assert!(err.to_string().contains(call), "{err}");
                // Measured on Debian's HIPs (2026-12-06): hipErrorInvalidDevice (101) from 5.2.3,
                // hipErrorNoDevice (100) from 5.7.1, 6.4.3 and 7.2.4 (5.7.1 answers 101 instead when it is
                // the process's first HIP call, as for hipDeviceGetDefaultMemPool above).
                let name = err.hip_code().and_then(|c| c.name());
                assert!(
                    matches!(name, Some("hipErrorInvalidDevice" | "hipErrorNoDevice")),
                    "{err}"
                );
            }
        }
    }
}
