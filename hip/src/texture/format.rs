//! Element formats of arrays and textures: which Rust types an array or texture may hold, and the
//! channel descriptor (`hipChannelFormatDesc`) each one is.

use crate::memory::DeviceCopy;
use hip_sys as sys;

/// How a channel's bits are read: `hipChannelFormatKindSigned`, `Unsigned` or `Float`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChannelKind {
    /// Signed integers.
    Signed,
    /// Unsigned integers.
    Unsigned,
    /// IEEE floats (32 bits, or 16: `half::f16`).
    Float,
}

/// A channel format: the bits of each of up to four channels (`x`, `y`, `z`, `w`; 0 for an absent one)
/// and how they are read. What `hipCreateChannelDesc` makes.
///
/// ```
/// use hip::texture::{ChannelFormat, ChannelKind};
/// let d = <[u8; 4]>::DESC;
/// assert_eq!((d.bits, d.kind), ([8, 8, 8, 8], ChannelKind::Unsigned));
/// assert_eq!(d.channels(), 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelDesc {
    /// Bits of each channel, `x` to `w`.
    pub bits: [i32; 4],
    /// How the bits are read.
    pub kind: ChannelKind,
}

impl ChannelDesc {
    /// How many channels there are (1, 2 or 4).
    pub fn channels(&self) -> usize {
        self.bits.iter().filter(|&&b| b > 0).count()
    }

    /// Bytes of one element (every channel).
    pub fn bytes(&self) -> usize {
        self.bits.iter().map(|&b| b.max(0) as usize).sum::<usize>() / 8
    }

    /// Whether a texture may return it as normalized floats (8- and 16-bit integers only).
    pub fn normalizable(&self) -> bool {
        self.kind != ChannelKind::Float && self.bits[0] <= 16
    }

    /// The resource view format (`hipResourceViewFormat`) that reads elements as this format: the
    /// same numbering on AMD's HIP and on NVIDIA (`cudaResourceViewFormat`), 1, 2 or 4 channels of 8,
    /// 16 or 32 bits (16-bit floats: `Half`).
    pub fn view_format(&self) -> u32 {
        // The first of the three (1, 2, 4 channels) of each scalar, as both headers number them.
        let first = match (self.kind, self.bits[0]) {
            (ChannelKind::Unsigned, 8) => 0x01,
            (ChannelKind::Signed, 8) => 0x04,
            (ChannelKind::Unsigned, 16) => 0x07,
            (ChannelKind::Signed, 16) => 0x0a,
            (ChannelKind::Unsigned, 32) => 0x0d,
            (ChannelKind::Signed, 32) => 0x10,
            (ChannelKind::Float, 16) => 0x13,
            _ => 0x16, // 32-bit float, the only other ChannelScalar
        };
        first
            + match self.channels() {
                1 => 0,
                2 => 1,
                _ => 2,
            }
    }

    /// The C descriptor.
    pub fn raw(&self) -> sys::hipChannelFormatDesc {
        let f = match self.kind {
            ChannelKind::Signed => sys::hipChannelFormatKindSigned,
            ChannelKind::Unsigned => sys::hipChannelFormatKindUnsigned,
            ChannelKind::Float => sys::hipChannelFormatKindFloat,
        };
        sys::hipChannelFormatDesc {
            x: self.bits[0],
            y: self.bits[1],
            z: self.bits[2],
            w: self.bits[3],
            f: f as _,
        }
    }
}

/// One channel's type: 8-, 16- and 32-bit integers, `f32`, and `half::f16`.
///
/// # Safety
/// `BITS` is the type's size in bits and `KIND` how a texture unit reads those bits.
pub unsafe trait ChannelScalar: DeviceCopy {
    /// Bits of the channel.
    const BITS: i32;
    /// How they are read.
    const KIND: ChannelKind;
}

macro_rules! scalar {
    ($($t:ty => $kind:ident),*) => { $(
        // SAFETY: BITS is the size of the type in bits (checked at compile time below) and KIND how the
        // hardware reads its bits (two's complement, unsigned, IEEE float).
        unsafe impl ChannelScalar for $t {
            const BITS: i32 = (std::mem::size_of::<$t>() * 8) as i32;
            const KIND: ChannelKind = ChannelKind::$kind;
        }
    )* };
}
scalar!(u8 => Unsigned, u16 => Unsigned, u32 => Unsigned, i8 => Signed, i16 => Signed,
    i32 => Signed, f32 => Float, half::f16 => Float);

/// An element type an array or texture may hold: a [`ChannelScalar`] (one channel), or a `[T; 2]` or
/// `[T; 4]` of one (two or four channels, the C vector types `uchar2`, `float4`, ...). HIP has no
/// three-channel arrays.
///
/// # Safety
/// `DESC` describes the type's bytes exactly: `DESC.bytes()` is its size and each channel lies where its
/// bits say.
pub unsafe trait ChannelFormat: DeviceCopy {
    /// The channel descriptor.
    const DESC: ChannelDesc;
}

// SAFETY: one channel of the scalar's bits, its size.
unsafe impl<T: ChannelScalar> ChannelFormat for T {
    const DESC: ChannelDesc = ChannelDesc {
        bits: [T::BITS, 0, 0, 0],
        kind: T::KIND,
    };
}

// SAFETY: two channels, each the scalar's bits, laid out in order with no padding (an array).
unsafe impl<T: ChannelScalar> ChannelFormat for [T; 2] {
    const DESC: ChannelDesc = ChannelDesc {
        bits: [T::BITS, T::BITS, 0, 0],
        kind: T::KIND,
    };
}

// SAFETY: four channels, as above.
unsafe impl<T: ChannelScalar> ChannelFormat for [T; 4] {
    const DESC: ChannelDesc = ChannelDesc {
        bits: [T::BITS, T::BITS, T::BITS, T::BITS],
        kind: T::KIND,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_match_the_rust_types() {
        fn check<T: ChannelFormat>(channels: usize) {
            assert_eq!(T::DESC.bytes(), std::mem::size_of::<T>());
            assert_eq!(T::DESC.channels(), channels);
        }
        check::<u8>(1);
        check::<[i16; 2]>(2);
        check::<[f32; 4]>(4);
        check::<half::f16>(1);
        check::<[half::f16; 4]>(4);
        assert!(<[u8; 4]>::DESC.normalizable());
        assert!(i16::DESC.normalizable());
        assert!(!u32::DESC.normalizable());
        assert!(!f32::DESC.normalizable());
        let raw = <[i8; 2]>::DESC.raw();
        assert_eq!((raw.x, raw.y, raw.z, raw.w), (8, 8, 0, 0));
        assert_eq!(i64::from(raw.f), i64::from(sys::hipChannelFormatKindSigned));
    }

    /// Each format's view format is the header's constant of that name (AMD's headers name them; on
    /// NVIDIA the CUDA values are the same numbers).
    #[cfg(hip_platform = "amd")]
    #[test]
    fn view_formats_are_the_headers_constants() {
        #[allow(clippy::unnecessary_cast)] // the enum's integer type differs between targets' bindings
        fn check<T: ChannelFormat>(want: sys::hipResourceViewFormat) {
            assert_eq!(T::DESC.view_format(), want as u32, "{:?}", T::DESC);
        }
        check::<u8>(sys::hipResViewFormatUnsignedChar1);
        check::<[u8; 4]>(sys::hipResViewFormatUnsignedChar4);
        check::<[i8; 2]>(sys::hipResViewFormatSignedChar2);
        check::<u16>(sys::hipResViewFormatUnsignedShort1);
        check::<[i16; 4]>(sys::hipResViewFormatSignedShort4);
        check::<[u32; 2]>(sys::hipResViewFormatUnsignedInt2);
        check::<i32>(sys::hipResViewFormatSignedInt1);
        check::<[half::f16; 2]>(sys::hipResViewFormatHalf2);
        check::<f32>(sys::hipResViewFormatFloat1);
        check::<[f32; 4]>(sys::hipResViewFormatFloat4);
    }
}
