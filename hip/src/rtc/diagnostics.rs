//! Compile logs that name the user's files: HIPRTC on AMD compiles through comgr, which writes the source
//! to a temporary directory and reports `/tmp/comgr-377f7c/input/CompileSource:1:49` (5.2.3: the
//! program's name is not used) or `/tmp/comgr-1569-0-5841a5/input/bad.hip:3:10` (5.7.1 to 7.2.4), and
//! headers as `/tmp/comgr-377f7c/include/name.h`. The log is shown with the program's name
//! ([`ProgramBuilder::name`](super::ProgramBuilder::name)) and the headers' include names instead, as
//! NVRTC already does (`bad.hip(1)`). Linear in the log's length.

/// `log` with each comgr temporary path of the source replaced by `name`, and of a header by its include
/// name.
pub(crate) fn show_names(log: &str, name: &str) -> String {
    const SOURCE: &str = "/input/CompileSource";
    const INPUT: &str = "/input/";
    const INCLUDE: &str = "/include/";
    let mut out = String::with_capacity(log.len());
    let mut rest = log;
    while let Some(at) = rest.find("/comgr-") {
        // The path starts after the last whitespace (or quote, or line start) before `comgr-`.
        let start = rest[..at]
            .rfind(|c: char| c.is_whitespace() || c == '\'' || c == '"')
            .map_or(0, |i| i + 1);
        let tail = &rest[at + 1..];
        // The comgr directory's name runs to the next '/'; then `input/CompileSource` or `include/`.
        let dir_end = at + 1 + tail.find('/').unwrap_or(tail.len());
        let after = &rest[dir_end..];
        out.push_str(&rest[..start]);
        if let Some(r) = after.strip_prefix(SOURCE) {
            out.push_str(name);
            rest = r;
        } else if let Some(r) = after
            .strip_prefix(INPUT)
            .or_else(|| after.strip_prefix(INCLUDE))
        {
            rest = r; // the program's or the header's own name follows
        } else {
            out.push_str(&rest[start..dir_end]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_and_headers_are_shown_by_their_names() {
        let log =
            "/tmp/comgr-92c68c/input/CompileSource:2:10: error: use of undeclared identifier 'x'\n\
                   In file included from /tmp/comgr-92c68c/input/CompileSource:1:\n\
                   /tmp/comgr-92c68c/include/my.h:3:1: error: unknown type name 'foo'\n\
                   /tmp/comgr-1569-0-5841a5/input/bad.hip:3:10: error: again\n\
                   2 errors generated when compiling for gfx90a.\n";
        assert_eq!(
            show_names(log, "bad.hip"),
            "bad.hip:2:10: error: use of undeclared identifier 'x'\n\
             In file included from bad.hip:1:\n\
             my.h:3:1: error: unknown type name 'foo'\n\
             bad.hip:3:10: error: again\n\
             2 errors generated when compiling for gfx90a.\n"
        );
    }

    #[test]
    fn other_text_is_left_alone() {
        for log in [
            "",
            "no paths here",
            "bad.hip(1): error: x",
            "/tmp/comgr-abc/output/x.o: warning",
            "trailing /comgr-",
            "/comgr-/input/CompileSource",
        ] {
            let shown = show_names(log, "p.hip");
            if log.ends_with("/input/CompileSource") {
                assert_eq!(shown, "p.hip");
            } else {
                assert_eq!(shown, log);
            }
        }
        assert_eq!(
            show_names("x '/tmp/comgr-1/input/CompileSource' y", "a.hip"),
            "x 'a.hip' y"
        );
    }

    #[test]
    fn a_long_log_is_rewritten_in_linear_time() {
        let line = "/tmp/comgr-92c68c/input/CompileSource:1:1: warning: w\n";
        let log = line.repeat(100_000);
        let shown =
            crate::test_time::within_a_cpu_second("show_names", || show_names(&log, "k.hip"));
        assert_eq!(shown, "k.hip:1:1: warning: w\n".repeat(100_000));
        // Worst case: one token of back-to-back comgr prefixes, no whitespace anywhere.
        let hostile = "/comgr-".repeat(200_000);
        let shown =
            crate::test_time::within_a_cpu_second("show_names", || show_names(&hostile, "k.hip"));
        assert_eq!(shown, hostile);
    }
}
