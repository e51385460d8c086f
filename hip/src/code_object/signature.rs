//! The per-launch argument check: a kernel's explicit parameters, reduced once (when the function is looked
//! up) to what each launch compares, and the comparison itself, which allocates nothing unless it fails.

use super::kernel::{Kernel, ParamKind};
use crate::error::{Error, Result};

/// What one launch argument is, as `LaunchArgs` records it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ArgInfo {
    /// Bytes the kernel receives (`u32::MAX` for anything larger).
    pub size: u32,
    /// A device buffer or view (an address), rather than a value.
    pub pointer: bool,
}

/// A kernel's signature reduced to what each launch compares. A loaded `Function` keeps one (built once
/// when it is looked up); [`LaunchArgs::check`](crate::LaunchArgs::check) compares arguments with one
/// without a GPU.
#[derive(Clone, Debug)]
pub struct Signature {
    /// Size and kind of each explicit parameter, in order.
    expected: Box<[(u64, ParamKind)]>,
    pub(crate) kernel: Kernel,
}

impl Signature {
    /// The signature of `kernel` (from [`CodeObject::kernels`](super::CodeObject::kernels)).
    pub fn new(kernel: Kernel) -> Signature {
        let expected = kernel.explicit_params().map(|p| (p.size, p.kind)).collect();
        Signature { expected, kernel }
    }

    /// The kernel as the code object declares it.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Compare `args` with the explicit parameters: count, each size, and pointer-vs-value where the code
    /// object says which.
    pub(crate) fn check(&self, args: &[ArgInfo]) -> Result<()> {
        for (index, (&(size, kind), got)) in self.expected.iter().zip(args).enumerate() {
            let kind_ok = match kind {
                ParamKind::Pointer => got.pointer,
                ParamKind::Value => !got.pointer,
                ParamKind::Hidden | ParamKind::Unknown => true,
            };
            if size != u64::from(got.size) || !kind_ok {
                return Err(self.mismatch_at(index, got));
            }
        }
        if args.len() != self.expected.len() {
            return Err(self.count_mismatch(args.len()));
        }
        Ok(())
    }

    /// The refusal of argument `index`, `got`. Out of line: the check every launch makes stays short.
    #[cold]
    #[inline(never)]
    fn mismatch_at(&self, index: usize, got: &ArgInfo) -> Error {
        self.mismatch(index, describe_arg(got))
    }

    /// The refusal of `given` arguments where the parameters number otherwise.
    #[cold]
    #[inline(never)]
    fn count_mismatch(&self, given: usize) -> Error {
        let index = given.min(self.expected.len());
        self.mismatch(index, format!("{given} argument(s)"))
    }

    fn mismatch(&self, index: usize, got: String) -> Error {
        let count = self.expected.len();
        let (parameter, expected) = match self.kernel.explicit_params().nth(index) {
            Some(p) => {
                let ty = p.type_name.as_deref().unwrap_or(&p.value_kind);
                // The source name where the metadata has one; PTX's generated `<kernel>_param_<i>`
                // says nothing the position does not.
                let generated = format!("{}_param_{index}", self.kernel.name);
                let parameter = match p.name.as_deref() {
                    Some(n) if n != generated => format!("`{n}`: {ty}"),
                    _ => ty.to_string(),
                };
                let what = match p.kind {
                    ParamKind::Pointer => "a pointer (pass a device buffer or view)",
                    ParamKind::Value => "a value",
                    _ => "a value or pointer",
                };
                (parameter, format!("{what} of {} bytes", p.size))
            }
            None => (String::new(), format!("{count} argument(s)")),
        };
        Error::ArgumentMismatch {
            kernel: self.kernel.name.clone(),
            index,
            count,
            parameter,
            expected,
            got,
        }
    }
}

fn describe_arg(a: &ArgInfo) -> String {
    if a.pointer {
        format!("a device buffer or view ({} bytes)", a.size)
    } else {
        format!("a value of {} bytes", a.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code_object::Param;

    fn p(name: &str, size: u64, kind: ParamKind) -> Param {
        Param {
            name: Some(name.into()),
            offset: 0,
            size,
            align: None,
            kind,
            value_kind: "x".into(),
            address_space: None,
            type_name: None,
        }
    }

    fn sig() -> Signature {
        Signature::new(Kernel {
            name: "k".into(),
            params: vec![
                p("a", 8, ParamKind::Pointer),
                p("n", 4, ParamKind::Value),
                p("s", 8, ParamKind::Value),
                p("hidden", 8, ParamKind::Hidden),
            ],
            ..Kernel::default()
        })
    }

    const PTR: ArgInfo = ArgInfo {
        size: 8,
        pointer: true,
    };
    const U32: ArgInfo = ArgInfo {
        size: 4,
        pointer: false,
    };
    const U64: ArgInfo = ArgInfo {
        size: 8,
        pointer: false,
    };

    fn refused(args: &[ArgInfo], index: usize, names: &str) {
        match sig().check(args) {
            Err(e @ Error::ArgumentMismatch { index: i, .. }) => {
                assert_eq!(i, index, "{e}");
                assert!(e.to_string().contains(names), "{e}");
            }
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn matching_arguments_pass_and_hidden_ones_are_not_expected() {
        sig().check(&[PTR, U32, U64]).unwrap();
    }

    #[test]
    fn each_mismatch_names_the_parameter() {
        refused(&[PTR, U32], 2, "`s`");
        refused(&[PTR, U64, U64], 1, "`n`");
        refused(&[PTR, U32, PTR], 2, "`s`");
        refused(&[U64, U32, U64], 0, "`a`");
        refused(&[PTR, U32, U64, U32], 3, "3 argument(s)");
        refused(&[], 0, "`a`");
    }

    fn message(args: &[ArgInfo]) -> String {
        sig().check(args).unwrap_err().to_string()
    }

    #[test]
    fn each_message_says_what_was_expected_and_what_came() {
        assert_eq!(
            message(&[U64, U32, U64]),
            "kernel `k` argument 1 of 3 (`a`: x): expected a pointer (pass a device buffer or view) of 8 \
             bytes, got a value of 8 bytes"
        );
        assert_eq!(
            message(&[PTR, U32, PTR]),
            "kernel `k` argument 3 of 3 (`s`: x): expected a value of 8 bytes, got a device buffer or view \
             (8 bytes)"
        );
        assert_eq!(
            message(&[PTR, U32, U64, U32]),
            "kernel `k` takes 3 argument(s), got 4 argument(s)"
        );
        assert_eq!(
            message(&[PTR]),
            "kernel `k` argument 2 of 3 (`n`: x): expected a value of 4 bytes, got 1 argument(s)"
        );
        // The type name where the metadata has one; a parameter of unknown kind takes either.
        let mut k = sig().kernel;
        k.params[0].type_name = Some("float*".into());
        k.params[0].kind = ParamKind::Unknown;
        let s = Signature::new(k);
        s.check(&[U64, U32, U64]).unwrap();
        s.check(&[PTR, U32, U64]).unwrap();
        let err = s.check(&[U32, U32, U64]).unwrap_err().to_string();
        assert!(
            err.contains(
                "argument 1 of 3 (`a`: float*): expected a value or pointer of 8 bytes, got a value of 4 bytes"
            ),
            "{err}"
        );
        assert_eq!(s.kernel().name, "k");
        assert_eq!(s.kernel().params.len(), 4);
    }

    #[test]
    fn an_unnamed_parameter_is_named_by_position_and_type() {
        let mut k = sig().kernel;
        k.params[1].name = None;
        let err = Signature::new(k).check(&[PTR, U64, U64]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "kernel `k` argument 2 of 3 (x): expected a value of 4 bytes, got a value of 8 bytes"
        );
        // PTX's generated names (`<kernel>_param_<i>`) are left out the same way; a source name that
        // only looks like one of another position is kept.
        let mut k = sig().kernel;
        k.params[1].name = Some("k_param_1".into());
        k.params[1].type_name = Some(".u32".into());
        let err = Signature::new(k.clone())
            .check(&[PTR, U64, U64])
            .unwrap_err();
        assert!(
            err.to_string().contains("argument 2 of 3 (.u32): expected"),
            "{err}"
        );
        k.params[1].name = Some("k_param_7".into());
        let err = Signature::new(k).check(&[PTR, U64, U64]).unwrap_err();
        assert!(err.to_string().contains("(`k_param_7`: .u32)"), "{err}");
    }
}
