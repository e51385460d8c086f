//! Finding a device: the one way to ask "is there a usable GPU" ([`Device::first_usable`]).

use crate::device::Device;
use crate::error::{Error, NoDeviceReason, Result};
use crate::result;

/// A failed device count as the crate reports it: every answer that means "no usable GPU" (no device, no
/// driver, a driver too old or failing) becomes [`Error::NoDevice`] with its reason; anything else stays.
pub(crate) fn no_usable_gpu(e: Error) -> Error {
    let Error::Hip { code, .. } = e else {
        return e;
    };
    let versions = || {
        (
            result::driver_version().ok(),
            result::runtime_version().ok(),
        )
    };
    // Only a driver answer (35) needs the versions to tell a missing driver from an old one.
    let (driver, runtime) = if code.0 == 35 {
        versions()
    } else {
        (None, None)
    };
    match NoDeviceReason::from_device_count(code, crate::PLATFORM, driver, runtime) {
        Some(reason) => Error::NoDevice {
            code,
            platform: crate::PLATFORM,
            reason,
        },
        None => e,
    }
}

impl Device {
    /// Device 0, the one a program with no choice to make uses: [`Device::get`]`(0)`. Where this
    /// machine has no usable GPU the error is [`Error::NoDevice`], whatever the cause (no device, no
    /// working driver, a driver older than the runtime), saying which ([`Error::is_no_device`]).
    pub fn first() -> Result<Device> {
        Device::get(0)
    }

    /// The one way to ask "is there a usable GPU": device 0 when there is one; otherwise `no_gpu` is
    /// called with the [`Error::NoDevice`] that says why (no device, no driver, an old driver, with what
    /// to check), and the answer is `Ok(None)`. Every other failure (a library that could not be loaded,
    /// a device that fails to open) is `Err`.
    ///
    /// ```no_run
    /// # fn main() -> hip::Result<()> {
    /// let Some(device) = hip::Device::first_usable(|why| println!("{why}"))? else {
    ///     return Ok(()); // no GPU here: the reason was printed
    /// };
    /// println!("running on {}", device.properties()?.name);
    /// # Ok(())
    /// # }
    /// ```
    pub fn first_usable(no_gpu: impl FnOnce(&Error)) -> Result<Option<Device>> {
        match Device::first() {
            Ok(d) => Ok(Some(d)),
            Err(e) if e.is_no_device() => {
                no_gpu(&e);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HipErrorCode, Status};
    use hip_sys::hipError_t;

    #[test]
    fn every_no_usable_gpu_answer_of_the_count_is_one_error_naming_no_call() {
        for (code, nvidia_only) in [
            (100, false),
            (35, false),
            (3, false),
            (34, true),
            (999, true),
        ] {
            let raw = Error::from_hip("hipGetDeviceCount", hipError_t(code));
            let mapped = no_usable_gpu(raw);
            if nvidia_only && crate::PLATFORM != "nvidia" {
                assert!(matches!(mapped, Error::Hip { .. }), "{code}: {mapped:?}");
                continue;
            }
            assert!(mapped.is_no_device(), "{code}: {mapped:?}");
            assert_eq!(mapped.status(), Status::BackendNotAvailable, "{code}");
            assert_eq!(
                mapped.hip_code(),
                Some(HipErrorCode(code)),
                "the raw code is kept"
            );
            let text = mapped.to_string();
            assert!(!text.contains("hipGetDeviceCount"), "{text}");
            let Error::NoDevice { reason, .. } = mapped else {
                unreachable!()
            };
            match code {
                100 => assert!(text.starts_with("no HIP device was found"), "{text}"),
                // No driver, or an old one: which depends on the versions this machine's runtime answers.
                35 => assert!(
                    matches!(
                        reason,
                        NoDeviceReason::NoDriver | NoDeviceReason::DriverTooOld { .. }
                    ) && text.starts_with("no usable GPU: ")
                        && text.contains("driver"),
                    "{text}"
                ),
                _ => assert!(text.starts_with("no usable GPU: "), "{text}"),
            }
        }
    }

    #[test]
    fn other_failures_of_the_count_stay_as_they_are() {
        let raw = Error::from_hip("hipGetDeviceCount", hipError_t(1));
        let mapped = no_usable_gpu(raw);
        assert!(
            matches!(
                &mapped,
                Error::Hip {
                    call: "hipGetDeviceCount",
                    ..
                }
            ),
            "{mapped:?}"
        );
        assert!(!mapped.is_no_device());
        // A library that could not be opened is a deployment error, not "no GPU".
        let missing = Error::LibraryNotFound {
            library: "the HIP runtime (libamdhip64)",
            tried: vec!["/nonexistent/libamdhip64.so: no such file".into()],
            install: "libamdhip64-5",
        };
        assert!(!no_usable_gpu(missing).is_no_device());
    }
}
