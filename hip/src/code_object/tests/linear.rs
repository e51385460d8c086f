//! The worst inputs for each parser's running time: each must take time linear in its input (the bound
//! each states in its rustdoc). These inputs took seconds (or far longer) before; a debug build must now
//! answer them within a generous second, with the right answer.
//!
//! Not run under Miri (far too slow there for megabyte inputs; the logic is covered by the other tests).

use crate::code_object::{CodeObject, ParamKind};
use std::time::{Duration, Instant};

/// `f`'s answer, after asserting it came within a second.
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(1), "{what} took {took:?}");
    out
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn ptx_line_comments_before_one_block_comment_are_stripped_in_linear_time() {
    // 240 KB of `//` lines, then the kernel, then an unclosed `/*`: the old stripper looked for the next
    // `/*` from every `//`, rescanning the rest of the text each time (6.9 s in a debug build).
    let kernel = ".visible .entry k(\n.param .u32 k_param_0\n)\n{\nret;\n}\n";
    for (comments, tail) in [("//\n", "/*"), ("/**/", "//")] {
        let mut text = String::from(".version 7.8\n.target sm_52\n");
        text.push_str(&comments.repeat(240_000 / comments.len()));
        text.push_str(kernel);
        text.push_str(tail);
        let co = timed("PTX comments", || CodeObject::parse(text.as_bytes())).unwrap();
        assert_eq!(co.kernels().len(), 1);
        let k = &co.kernels()[0];
        assert_eq!((k.name.as_str(), k.target.as_str()), ("k", "sm_52"));
        assert_eq!(k.params[0].size, 4);
    }
}

#[test]
#[cfg_attr(miri, ignore = "megabyte inputs")]
fn ptx_with_many_kernels_parses_in_linear_time() {
    let mut text = String::from(".version 7.8\n.target sm_52\n");
    for i in 0..10_000 {
        text.push_str(&format!(
            ".entry k{i}(.param .u64 .ptr .global p, .param .align 8 .b8 s[16])\n.maxntid 64, 1, 1\n{{ ret; }}\n// k{i}\n"
        ));
    }
    let co = timed("10,000 PTX kernels", || CodeObject::parse(text.as_bytes())).unwrap();
    assert_eq!(co.kernels().len(), 10_000);
    let last = co.kernel("k9999", None).unwrap();
    assert_eq!(last.params[0].kind, ParamKind::Pointer);
    assert_eq!(last.kernarg_segment_size, Some(24));
    assert_eq!(last.max_workgroup_size, Some(64));
}
