//! The arithmetic behind reinterpreting device memory as another element type
//! ([`DeviceMemory::reinterpret`](super::DeviceMemory::reinterpret)).

use super::DevicePtr;
use crate::error::{Error, Result};

/// How many `U` the `bytes` at `ptr` hold, if they hold whole, aligned `U`s.
pub(super) fn reinterpreted_len<U>(ptr: DevicePtr, bytes: usize) -> Result<usize> {
    let (size, align) = (std::mem::size_of::<U>(), std::mem::align_of::<U>());
    let refuse = |reason: String| {
        Err(Error::InvalidArgument {
            what: "element type to reinterpret device memory as",
            value: std::any::type_name::<U>().to_string(),
            reason,
        })
    };
    if size == 0 {
        return refuse("a zero-sized type holds no bytes".into());
    }
    if bytes % size != 0 {
        return refuse(format!(
            "{bytes} bytes are not a whole number of {size}-byte elements"
        ));
    }
    if ptr as usize % align != 0 {
        return refuse(format!(
            "the memory starts at {ptr:p}, not aligned to {align} bytes"
        ));
    }
    Ok(bytes / size)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(addr: usize) -> DevicePtr {
        addr as DevicePtr
    }

    #[test]
    fn whole_aligned_elements_are_counted_and_the_rest_refused() {
        assert_eq!(reinterpreted_len::<u32>(at(0x1000), 16).unwrap(), 4);
        assert_eq!(reinterpreted_len::<[f32; 4]>(at(0x1000), 64).unwrap(), 4);
        assert_eq!(reinterpreted_len::<u8>(at(0x1003), 5).unwrap(), 5);
        assert_eq!(reinterpreted_len::<u64>(at(0x1000), 0).unwrap(), 0);
        let reason = |r: Result<usize>| match r {
            Err(Error::InvalidArgument { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        assert!(reason(reinterpreted_len::<u32>(at(0x1000), 6)).contains("6 bytes"));
        assert!(reason(reinterpreted_len::<u32>(at(0x1002), 8)).contains("aligned to 4"));
        assert!(reason(reinterpreted_len::<()>(at(0x1000), 8)).contains("zero-sized"));
        assert!(reinterpreted_len::<u16>(at(0x1001), usize::MAX - 1).is_err());
        assert_eq!(
            reinterpreted_len::<u8>(at(0x1000), usize::MAX).unwrap(),
            usize::MAX
        );
    }
}
