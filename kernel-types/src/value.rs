//! [`DeviceValue`]: the element types a kernel may read, write and take by value. Its own module, below
//! both [`device`](crate::device) (the parameter views, which re-export it) and the shared-memory module,
//! so that neither imports the other for it.

mod sealed {
    pub trait Sealed {}
}

/// An element type a kernel may read and write through [`In`](crate::device::In) and [`Out`](crate::device::Out), or take by value: the
/// primitive numbers, for which every bit pattern is a value (so reading device memory is never
/// undefined behaviour) and whose layout the host and the device agree on.
pub trait DeviceValue: Copy + sealed::Sealed + 'static {}

macro_rules! device_values {
    ($($t:ty),*) => { $(impl sealed::Sealed for $t {} impl DeviceValue for $t {})* };
}
device_values!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
// Plain data too (two f32 and a u64, no padding; every bit pattern a value): read through `In<Affine>`.
device_values!(crate::Affine);
