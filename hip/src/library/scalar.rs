//! The per-element-type traits of raw library calls (`hip::blas`'s `BlasScalar`, `hip::solver`'s
//! `SolverScalar`, ...), generated from one table of signatures each.
//!
//! A module writes its calls once, as a table macro of rows `name(param: Type, ...) -> Status;` that hands
//! the rows to whichever generator it is given: `declare_calls!` declares them in the trait,
//! `forward_calls!` implements them for one element type, each row calling the library function named in
//! the same place of that type's list. Adding an element type is one list of function names; a list of the
//! wrong length does not compile.

/// An argument handed on to a library function: a pointer re-typed to the header's element type (which
/// has the layout of the crate's element type it stands for), anything else unchanged. Narrower than
/// `as _`: an integer keeps its type and a pointer its constness (or gains `const`), so a table row that
/// disagrees with the header is a compile error, not a conversion.
pub(crate) trait Arg<T> {
    /// `self`, as the header's parameter type.
    fn arg(self) -> T;
}

impl<T, U> Arg<*mut U> for *mut T {
    #[inline(always)]
    fn arg(self) -> *mut U {
        self.cast()
    }
}

impl<T, U> Arg<*const U> for *mut T {
    #[inline(always)]
    fn arg(self) -> *const U {
        self.cast_const().cast()
    }
}

impl<T, U> Arg<*const U> for *const T {
    #[inline(always)]
    fn arg(self) -> *const U {
        self.cast()
    }
}

/// Integers (sizes, increments, strides, and the headers' enums, which are C `int` or `unsigned`) pass
/// as they are.
macro_rules! same {
    ($($t:ty),*) => {$(
        impl Arg<$t> for $t {
            #[inline(always)]
            fn arg(self) -> $t {
                self
            }
        }
    )*};
}
same!(i8, i32, u32, i64);

/// The trait's declarations of a table's rows: `declare_calls!(rows)`, or `declare_calls!(#[doc(hidden)]
/// rows)` to hide every one from the docs. Each function's contract is the trait's `# Safety`.
macro_rules! declare_calls {
    (#[doc(hidden)] $($(#[$m:meta])* $name:ident($($p:ident: $t:ty),* $(,)?) -> $ret:ty;)*) => {
        $(#[doc(hidden)] $(#[$m])* unsafe fn $name($($p: $t),*) -> $ret;)*
    };
    ($($(#[$m:meta])* $name:ident($($p:ident: $t:ty),* $(,)?) -> $ret:ty;)*) => {
        $($(#[$m])* unsafe fn $name($($p: $t),*) -> $ret;)*
    };
}
pub(crate) use declare_calls;

/// One element type's implementation of a table's rows: `forward_calls!(sys [f, g, ...] rows)` makes
/// row `i` call `sys::` the `i`-th function of the list with its arguments, pointers re-typed ([`Arg`]).
/// A row's parameters are the header function's, in its order: the types are checked against the
/// header, the order of two of one type is not.
macro_rules! forward_calls {
    ($lib:ident [$($f:ident),* $(,)?]
     $($(#[$m:meta])* $name:ident($($p:ident: $t:ty),* $(,)?) -> $ret:ty;)*) => {$(
        #[inline]
        unsafe fn $name($($p: $t),*) -> $ret {
            // SAFETY: the library function's contract is the trait's `# Safety`, which the caller
            // keeps (a live handle whose device is current; every pointer spanning what the sizes
            // reach on the handle's device, ordered and kept alive until the queued call is done):
            // the row takes the header's parameters in the header's order, and passes each pointer
            // re-typed to the header's element type, which has the layout of the type it stands for
            // (f32 / f64; `#[repr(C)]` Complex: two of them, real part first).
            unsafe { $lib::$f($($crate::library::scalar::Arg::arg($p)),*) }
        }
    )*};
}
pub(crate) use forward_calls;
