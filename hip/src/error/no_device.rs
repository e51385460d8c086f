//! "No usable GPU" as one error: which raw answers of the runtime mean it, why each one (no device, no
//! driver, a driver too old, one that failed), and what [`Error::NoDevice`](super::Error::NoDevice) says.

use super::HipErrorCode;
use std::fmt;

/// Why this machine has no usable GPU: the reason an [`Error::NoDevice`](super::Error::NoDevice) gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoDeviceReason {
    /// The driver works and sees no device (`hipErrorNoDevice`): none is installed, none is of this
    /// build's platform, or every one is hidden (`HIP_VISIBLE_DEVICES`, `CUDA_VISIBLE_DEVICES`,
    /// `ROCR_VISIBLE_DEVICES`).
    NoDevice,
    /// No working driver behind the runtime (`hipErrorInsufficientDriver` with no driver version, or
    /// CUDA's stub-library answer): none is installed or loaded, or, on HIP's NVIDIA platform, the
    /// `libcuda.so.1` the loader found is the CUDA toolkit's link-time stub (`stubs/`), not the driver's.
    NoDriver,
    /// A driver older than the runtime this program was built with (`hipErrorInsufficientDriver`).
    DriverTooOld {
        /// The driver's version as the runtime reports it (`hipDriverGetVersion`).
        driver: i32,
        /// The runtime's version (`hipRuntimeGetVersion`).
        runtime: i32,
    },
    /// The driver is there but could not be initialised (`hipErrorNotInitialized`, or on HIP's NVIDIA
    /// platform a CUDA answer HIP translates to `hipErrorUnknown`: the driver and its user-space library
    /// of different versions, devices unavailable).
    DriverFailed,
}

impl NoDeviceReason {
    /// The reason behind a device count that failed with `code`, or `None` when `code` does not mean "no
    /// usable GPU". `driver` and `runtime` are the versions the runtime reports (`None` where it could
    /// not say); they tell a missing driver from an old one.
    pub(crate) fn from_device_count(
        code: HipErrorCode,
        platform: &str,
        driver: Option<i32>,
        runtime: Option<i32>,
    ) -> Option<NoDeviceReason> {
        let nvidia = platform == "nvidia";
        match code.0 {
            100 => Some(NoDeviceReason::NoDevice),
            35 => Some(match (driver, runtime) {
                (Some(driver), Some(runtime)) if driver > 0 && driver < runtime => {
                    NoDeviceReason::DriverTooOld { driver, runtime }
                }
                _ => NoDeviceReason::NoDriver,
            }),
            // cudaErrorStubLibrary: not a HIP code; passed through by HIP headers that do not translate it.
            34 if nvidia => Some(NoDeviceReason::NoDriver),
            3 => Some(NoDeviceReason::DriverFailed),
            // HIP's NVIDIA headers translate every CUDA code they do not list (stub library 34, system
            // driver mismatch 803, devices unavailable 46, ...) to hipErrorUnknown: from the device count,
            // the first call to reach the driver, that is a driver that cannot be used.
            999 if nvidia => Some(NoDeviceReason::DriverFailed),
            _ => None,
        }
    }
}

/// A runtime or driver version in the form its platform writes it: CUDA's `12090` is `12.9`, HIP's
/// `50221153` is `5.2.21153`.
fn version(v: i32, platform: &str) -> String {
    if platform == "nvidia" {
        format!("{}.{}", v / 1000, v % 1000 / 10)
    } else {
        format!("{}.{}.{}", v / 10_000_000, v / 100_000 % 100, v % 100_000)
    }
}

/// What `Error::NoDevice` says: what is wrong, the raw code, and what to check on `platform`. It names
/// no HIP call: the user asked for a device, not for `hipGetDeviceCount`.
pub(super) fn message(code: HipErrorCode, platform: &str, reason: NoDeviceReason) -> String {
    let nvidia = platform == "nvidia";
    let driver = if nvidia {
        "NVIDIA"
    } else if cfg!(windows) {
        "AMD"
    } else {
        "amdgpu"
    };
    match reason {
        NoDeviceReason::NoDevice => {
            let check = if nvidia {
                "the NVIDIA driver is loaded (`nvidia-smi` lists the GPU), CUDA_VISIBLE_DEVICES and \
                 HIP_VISIBLE_DEVICES do not hide every GPU, and the GPU is an NVIDIA one (this build is \
                 for HIP's NVIDIA platform: an AMD GPU needs a build for the AMD platform)"
            } else if cfg!(windows) {
                "AMD's Windows driver (Adrenalin or PRO edition) is installed and Device Manager lists the \
                 GPU, HIP_VISIBLE_DEVICES does not hide every GPU, and the GPU is an AMD one the HIP SDK \
                 supports (this build is for the AMD platform)"
            } else {
                "the amdgpu driver is loaded and this user may open /dev/kfd and /dev/dri (the `render` \
                 and `video` groups), HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES do not hide every \
                 GPU, and the GPU is an AMD one (this build is for the AMD platform: an NVIDIA GPU needs \
                 HIP_PLATFORM=nvidia)"
            };
            format!("no HIP device was found ({code}); check that {check}")
        }
        NoDeviceReason::NoDriver => {
            let check = if nvidia {
                "the NVIDIA driver is installed and loaded (`nvidia-smi` works), and that the \
                 libcuda.so.1 this program loads is the driver's, not the CUDA toolkit's link-time stub \
                 (a `stubs/` directory on LD_LIBRARY_PATH: take it off)"
            } else if cfg!(windows) {
                "AMD's Windows driver (Adrenalin or PRO edition) is installed and the HIP SDK's runtime \
                 matches it"
            } else {
                "the amdgpu kernel driver is loaded (/dev/kfd exists) and ROCm's user-space runtime \
                 matches it"
            };
            format!("no usable GPU: no working {driver} driver was found ({code}); check that {check}")
        }
        NoDeviceReason::DriverTooOld { driver: d, runtime } => format!(
            "no usable GPU: the {driver} driver ({}) is older than the runtime this program was built \
             with ({}) ({code}); install a newer driver, or build against an older {}",
            version(d, platform),
            version(runtime, platform),
            if nvidia { "CUDA" } else { "ROCm" }
        ),
        NoDeviceReason::DriverFailed => {
            let check = if nvidia {
                "`nvidia-smi` works (after a driver update, the kernel module and libcuda.so.1 must be \
                 of one version: reboot or reload the module), the GPU is not in exclusive use by \
                 another process, and libcuda.so.1 is the driver's, not the CUDA toolkit's stub"
            } else if cfg!(windows) {
                "AMD's Windows driver (Adrenalin or PRO edition) works (Device Manager shows no error for \
                 the GPU) and the HIP SDK's runtime matches it"
            } else {
                "the amdgpu kernel driver is loaded, this user may open /dev/kfd and /dev/dri, and \
                 ROCm's user-space runtime matches the kernel driver"
            };
            format!("no usable GPU: the {driver} driver could not be initialised ({code}); check that {check}")
        }
    }
}

impl fmt::Display for NoDeviceReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoDeviceReason::NoDevice => f.write_str("no device"),
            NoDeviceReason::NoDriver => f.write_str("no driver"),
            NoDeviceReason::DriverTooOld { driver, runtime } => {
                write!(f, "driver {driver} older than runtime {runtime}")
            }
            NoDeviceReason::DriverFailed => f.write_str("driver failed to initialise"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(
        code: u32,
        platform: &str,
        driver: Option<i32>,
        runtime: Option<i32>,
    ) -> Option<NoDeviceReason> {
        NoDeviceReason::from_device_count(HipErrorCode(code), platform, driver, runtime)
    }

    #[test]
    fn no_device_no_driver_and_an_old_driver_are_told_apart() {
        for platform in ["amd", "nvidia"] {
            assert_eq!(
                reason(100, platform, None, None),
                Some(NoDeviceReason::NoDevice)
            );
            // The runtime says the driver's version is 0 (none) or cannot say: no driver.
            assert_eq!(
                reason(35, platform, Some(0), Some(12090)),
                Some(NoDeviceReason::NoDriver)
            );
            assert_eq!(
                reason(35, platform, None, Some(12090)),
                Some(NoDeviceReason::NoDriver)
            );
            assert_eq!(
                reason(35, platform, Some(11040), Some(12090)),
                Some(NoDeviceReason::DriverTooOld {
                    driver: 11040,
                    runtime: 12090
                })
            );
            // AMD answers its own version for the driver: equal is not older.
            assert_eq!(
                reason(35, platform, Some(50221153), Some(50221153)),
                Some(NoDeviceReason::NoDriver)
            );
            assert_eq!(
                reason(3, platform, None, None),
                Some(NoDeviceReason::DriverFailed)
            );
        }
    }

    #[test]
    fn other_codes_stay_what_they_are() {
        for code in [0, 1, 2, 101, 500, 801, 0x4852_0001] {
            for platform in ["amd", "nvidia"] {
                assert_eq!(
                    reason(code, platform, None, None),
                    None,
                    "{code} {platform}"
                );
            }
        }
        // CUDA's stub-library code and HIP's translation of unlisted CUDA codes mean a driver problem only
        // on the NVIDIA platform.
        assert_eq!(
            reason(34, "nvidia", None, None),
            Some(NoDeviceReason::NoDriver)
        );
        assert_eq!(
            reason(999, "nvidia", None, None),
            Some(NoDeviceReason::DriverFailed)
        );
        assert_eq!(reason(34, "amd", None, None), None);
        assert_eq!(reason(999, "amd", None, None), None);
    }

    #[test]
    fn each_reason_shows_in_a_few_words() {
        let shown = [
            (NoDeviceReason::NoDevice, "no device"),
            (NoDeviceReason::NoDriver, "no driver"),
            (
                NoDeviceReason::DriverTooOld {
                    driver: 11040,
                    runtime: 12090,
                },
                "driver 11040 older than runtime 12090",
            ),
            (NoDeviceReason::DriverFailed, "driver failed to initialise"),
        ];
        for (reason, words) in shown {
            assert_eq!(reason.to_string(), words);
        }
    }

    #[test]
    fn versions_are_written_as_each_platform_writes_them() {
        assert_eq!(version(12090, "nvidia"), "12.9");
        assert_eq!(version(11080, "nvidia"), "11.8");
        assert_eq!(version(50221153, "amd"), "5.2.21153");
        assert_eq!(version(70_243_001, "amd"), "7.2.43001");
    }

    #[test]
    fn each_message_says_what_is_wrong_and_names_no_call() {
        let code = HipErrorCode(35);
        let no_driver = message(code, "nvidia", NoDeviceReason::NoDriver);
        assert!(
            no_driver.starts_with("no usable GPU: no working NVIDIA driver was found"),
            "{no_driver}"
        );
        assert!(
            no_driver.contains("hipErrorInsufficientDriver (35)"),
            "{no_driver}"
        );
        assert!(no_driver.contains("stub"), "{no_driver}");
        let old = message(
            code,
            "nvidia",
            NoDeviceReason::DriverTooOld {
                driver: 11040,
                runtime: 12090,
            },
        );
        assert!(
            old.starts_with(
                "no usable GPU: the NVIDIA driver (11.4) is older than the runtime this program \
                             was built with (12.9)"
            ),
            "{old}"
        );
        let amd = message(HipErrorCode(3), "amd", NoDeviceReason::DriverFailed);
        if cfg!(windows) {
            // Run under Wine by scripts/check-windows-wine.sh: Windows' driver, no Linux device files.
            assert!(
                amd.contains("AMD driver could not be initialised")
                    && amd.contains("Device Manager")
                    && !amd.contains("/dev/"),
                "{amd}"
            );
        } else {
            assert!(
                amd.contains("amdgpu driver could not be initialised") && amd.contains("/dev/kfd"),
                "{amd}"
            );
        }
        for (platform, reason) in [
            ("amd", NoDeviceReason::NoDevice),
            ("nvidia", NoDeviceReason::NoDevice),
            ("amd", NoDeviceReason::NoDriver),
            ("nvidia", NoDeviceReason::DriverFailed),
        ] {
            let text = message(code, platform, reason);
            assert!(
                !text.contains("hipGetDeviceCount") && !text.contains("failed:"),
                "{text}"
            );
        }
    }
}
