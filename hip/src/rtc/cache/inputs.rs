//! Which compiles the cache may store: only those whose output depends on nothing but the key.
//!
//! The key holds the source, the given headers, the options and the toolchain. A compile that reads a file
//! from disk (`-I dir` then `#include "x.h"`, `-include file`, an absolute `#include "/path/x.h"`, a
//! response file `@args`, `__has_include`) could give other code after that file changes, so such compiles
//! are **not cached**: they always run the compiler, and their outcome says why
//! (`CacheOutcome::NotStored`). This is decided conservatively:
//!
//! - every option must be one of a known list that reads no file (`-O*`, `-D*`, `-U*`, `-std=`,
//!   `-g*`, `-w`, warning flags, the target options, `-f`/`-m` flags without a value, ...);
//! - `HIPRTC_COMPILE_OPTIONS_APPEND` and `HIPRTC_LINK_OPTIONS_APPEND` (read by newer HIPRTCs) are unset;
//! - every occurrence of the words `include`, `import`, `embed` or `incbin` (an assembler directive) in the
//!   source and headers (after joining backslash-continued lines and dropping comments, as the preprocessor
//!   does; text with a raw string literal keeps its comments) must be an `#include "name"` or
//!   `#include <name>` of a header given to the builder by exactly that name.

use super::Request;
use std::collections::HashSet;

/// Environment variables through which newer HIPRTCs (rocclr flags) add compiler options the key does not
/// see.
const OPTION_ENV: &[&str] = &[
    "HIPRTC_COMPILE_OPTIONS_APPEND",
    "HIPRTC_LINK_OPTIONS_APPEND",
];

/// The version of the rules below, part of every key: an entry stored under other rules is never a hit.
pub(crate) const RULES: u64 = 1;

/// Why this compile may read something the key does not hold, if it may: both checks below.
#[cfg(test)]
pub(crate) fn reads_outside_files(request: &Request<'_>) -> Option<String> {
    options_read_files(request).or_else(|| texts_read_files(request))
}

/// The checks made on every compile, hits included (they are cheap and depend on the environment, which
/// the key does not hold): options added from the environment, and options that may read files.
pub(crate) fn options_read_files(request: &Request<'_>) -> Option<String> {
    if let Some(why) = env_adds_options(|v| std::env::var_os(v)) {
        return Some(why);
    }
    request
        .options
        .iter()
        .find(|o| !option_reads_no_file(o))
        .map(|o| format!("option `{o}` may make the compiler read files the cache cannot key on"))
}

/// The scan of the source and headers for includes of files not given. Its answer depends on the source,
/// the headers and their names only, all of which the key holds, so it runs before a store and not before
/// a lookup: an entry exists only for a key whose texts passed it (under the same [`RULES`]).
pub(crate) fn texts_read_files(request: &Request<'_>) -> Option<String> {
    // A set: every include is looked up, so a list would make the scan quadratic.
    let given: HashSet<&str> = request.headers.iter().map(|(n, _)| n.as_str()).collect();
    let texts = std::iter::once((request.name, request.source)).chain(
        request
            .headers
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_str())),
    );
    for (file, text) in texts {
        if let Some(what) = outside_include(text, &given) {
            return Some(format!(
                "`{file}` has `{what}`, which may read a file the cache cannot key on"
            ));
        }
    }
    None
}

/// Why the environment (read through `get`) may add options the key does not hold, if it may.
fn env_adds_options(get: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<String> {
    OPTION_ENV
        .iter()
        .find(|v| get(v).is_some_and(|x| !x.is_empty()))
        .map(|var| {
            format!("{var} is set: HIPRTC adds options from it that the cache cannot key on")
        })
}

fn option_reads_no_file(o: &str) -> bool {
    const EXACT: &[&str] = &[
        "-w",
        "-g",
        "-g0",
        "-g1",
        "-g2",
        "-g3",
        "-fgpu-rdc",
        "-fno-gpu-rdc",
        "-ffast-math",
        "-fno-fast-math",
        "--use_fast_math",
        "-use_fast_math",
    ];
    const PREFIXES: &[&str] = &[
        "-D",
        "-U",
        "-O",
        "-std=",
        "--std=",
        "--gpu-architecture=",
        "--offload-arch=",
        "-arch=",
        "-mcode-object-version=",
        "-fgpu-flush-denormals-to-zero",
        "-fno-gpu-flush-denormals-to-zero",
    ];
    let simple_flag = |rest: &str| {
        !rest.is_empty()
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
    };
    EXACT.contains(&o)
        || PREFIXES.iter().any(|p| o.starts_with(p)) && !o.contains('@')
        // -Wall, -Wno-unused, -Werror: warnings read no file (but not -Wl,... or -Wp,...).
        || o.strip_prefix("-W").is_some_and(simple_flag)
        // -fno-exceptions, -funroll-loops, -mno-wavefrontsize64: flags without a value.
        || o.strip_prefix("-f").is_some_and(|r| simple_flag(r) && !r.contains("profile") && !r.contains("module"))
        || o.strip_prefix("-m").is_some_and(simple_flag) && o != "-mllvm"
}

/// The first include-like word in `text` that is not an `#include` of a given header.
///
/// Time O(`text.len()`): each word is searched for once, front to back; checking an include reads the
/// blanks before it and its name up to the closing quote, and only the first include that is not a given
/// header's (which ends the scan) can read past its own line.
fn outside_include(text: &str, given: &HashSet<&str>) -> Option<String> {
    // Join backslash-continued lines and drop comments, as the preprocessor does before directives.
    let joined = text.replace("\\\r\n", "").replace("\\\n", "");
    let joined = without_comments(&joined);
    let bytes = joined.as_bytes();
    // `.incbin` / `.include` are assembler directives that read files too (inline `asm`).
    for word in ["include", "import", "embed", "incbin"] {
        let mut from = 0;
        while let Some(at) = joined[from..].find(word).map(|i| i + from) {
            from = at + word.len();
            if word == "include" && is_given_include(&joined, at, given) {
                continue;
            }
            let start = joined[..at].rfind('\n').map_or(0, |i| i + 1);
            let end = joined[at..].find('\n').map_or(bytes.len(), |i| i + at);
            return Some(joined[start..end].trim().to_string());
        }
    }
    None
}

/// `text` with each comment replaced by a space (a line comment keeps its newline), as translation phase 3
/// does, so that words in comments do not count. String and character literals are copied whole (a `//`
/// inside one is no comment; an `.incbin` inside an `asm` string still counts). Text holding a raw string
/// literal (`R"`) is returned as it is: its delimiters are not parsed here, and keeping comments only makes
/// the check stricter.
fn without_comments(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains("R\"") {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1)) {
            (q @ (b'"' | b'\''), _) => {
                out.push(q);
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    if b[i] == b'\\' && i + 1 < b.len() {
                        out.push(b[i]);
                        i += 1;
                    }
                    out.push(b[i]);
                    i += 1;
                }
                if i < b.len() && b[i] == q {
                    out.push(q);
                    i += 1;
                }
            }
            (b'/', Some(b'/')) => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                out.push(b' ');
            }
            (b'/', Some(b'*')) => {
                i = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                out.push(b' ');
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Only ASCII bytes were removed or added, so the rest is still UTF-8.
    std::borrow::Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string()))
}

/// Whether the `include` at byte `at` is `#include "name"` / `#include <name>` of a given header, with only
/// blanks around the `#` and before the name.
fn is_given_include(text: &str, at: usize, given: &HashSet<&str>) -> bool {
    let before = text[..at].trim_end_matches([' ', '\t']);
    let Some(before_hash) = before.strip_suffix('#') else {
        return false;
    };
    let line_start = before_hash.trim_end_matches([' ', '\t']);
    if !(line_start.is_empty() || line_start.ends_with('\n')) {
        return false;
    }
    let rest = text[at + "include".len()..].trim_start_matches([' ', '\t']);
    let (close, rest) = match rest.as_bytes().first() {
        Some(b'"') => ('"', &rest[1..]),
        Some(b'<') => ('>', &rest[1..]),
        _ => return false,
    };
    let Some(end) = rest.find(close) else {
        return false;
    };
    let name = &rest[..end];
    !name.contains('\n') && given.contains(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(
        source: &'a str,
        headers: &'a [(String, String)],
        options: &'a [String],
    ) -> Request<'a> {
        Request {
            output: "code",
            source,
            name: "p.hip",
            headers,
            options,
            name_expressions: &[],
        }
    }

    fn reason(source: &str, headers: &[(&str, &str)], options: &[&str]) -> Option<String> {
        let h: Vec<(String, String)> = headers
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        let o: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        reads_outside_files(&request(source, &h, &o))
    }

    #[test]
    fn words_in_comments_do_not_count_but_directives_after_comments_do() {
        let src = "// plain HIP without includes, see #include <x>\n/* #include \"/etc/y\" */\n__global__ void k() {}\n";
        assert_eq!(reason(src, &[], &[]), None);
        let hidden = "/* c */ #include \"/etc/hosts\"\n";
        assert!(reason(hidden, &[], &[]).is_some());
        let in_string = "const char* s = \"// \"; \n#include \"/etc/hosts\"\n";
        assert!(reason(in_string, &[], &[]).is_some());
        let asm = "__global__ void k() { asm(\".incbin \\\"/etc/hosts\\\"\"); } // incbin\n";
        assert!(reason(asm, &[], &[]).is_some());
        let raw = "const char* s = R\"(/*)\"; // include\n";
        assert!(
            reason(raw, &[], &[]).is_some(),
            "raw strings keep comments: stricter"
        );
        let unclosed = "/* #include \"/etc/hosts\"\n";
        assert_eq!(reason(unclosed, &[], &[]), None);
    }

    #[test]
    fn given_headers_and_plain_options_are_cacheable() {
        let src = "#include \"a.h\"\n  #  include <b.h>\n__global__ void k() {}\n";
        let headers = [("a.h", "#define A 1\n#include \"b.h\"\n"), ("b.h", "")];
        let options = [
            "-O3",
            "-DX=1",
            "-UX",
            "-std=c++17",
            "-Wall",
            "-Wno-unused",
            "-ffast-math",
            "-fno-exceptions",
            "-mno-wavefrontsize64",
            "-g",
            "--gpu-architecture=gfx90a",
        ];
        assert_eq!(reason(src, &headers, &options), None);
    }

    #[test]
    fn includes_of_files_not_given_are_not_cacheable() {
        for src in [
            "#include \"disk.h\"\n",
            "#include </etc/hosts>\n",
            "#include \"/abs/path.h\"\n",
            "# \\\n include \"disk.h\"\n",
            "#inc\\\nlude \"disk.h\"\n",
            "#include_next <a.h>\n",
            "#if __has_include(\"x.h\")\n#endif\n",
            "#define H \"a.h\"\n#include H\n",
            "#import \"a.h\"\n",
            "#embed \"data.bin\"\n",
            "int x; #include \"a.h\"\n",
            "#include \"a.h\n\"\n",
            "__global__ void k() { asm(\".incbin \\\"/etc/hosts\\\"\"); }\n",
            "__global__ void k() { asm(\".include \\\"x.s\\\"\"); }\n",
        ] {
            let r = reason(src, &[("a.h", "")], &[]);
            assert!(r.is_some(), "{src:?}");
        }
        // In a given header too.
        assert!(reason(
            "#include \"a.h\"\n",
            &[("a.h", "#include \"disk.h\"\n")],
            &[]
        )
        .is_some());
    }

    #[test]
    fn options_added_from_the_environment_make_it_uncacheable() {
        let env = |set: &'static str| {
            move |v: &str| (v == set).then(|| std::ffi::OsString::from("-DX=1"))
        };
        for var in OPTION_ENV {
            let r = env_adds_options(env(var));
            assert!(r.is_some_and(|r| r.contains(var)), "{var}");
        }
        assert_eq!(env_adds_options(|_| Some("".into())), None);
        assert_eq!(env_adds_options(|_| None), None);
    }

    #[test]
    fn options_that_may_read_files_are_not_cacheable() {
        for o in [
            "-I/usr/include",
            "-I",
            "-isystem/x",
            "-include",
            "-includefoo.h",
            "-imacros",
            "--include-directory=/x",
            "@args.txt",
            "-DX=@y",
            "-fprofile-use=/p",
            "-Wl,-rpath",
            "-Wp,-MD",
            "-Xclang",
            "-mllvm",
            "--sysroot=/x",
            "-fmodules",
            "-mattr=+x",
            "-fsanitize-ignorelist=/x",
        ] {
            let r = reason("", &[], &[o]);
            assert!(r.as_deref().is_some_and(|r| r.contains(o)), "{o}: {r:?}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "megabyte inputs")]
    fn many_headers_each_included_are_checked_in_linear_time() {
        // 20,000 given headers, each included once: looking every include up in a list of the given
        // names was quadratic.
        let n = 20_000;
        let names: Vec<String> = (0..n).map(|i| format!("dir/header_{i}.h")).collect();
        let headers: Vec<(&str, &str)> = names.iter().map(|h| (h.as_str(), "")).collect();
        let mut src: String = names
            .iter()
            .map(|h| format!("#include \"{h}\"\n"))
            .collect();
        let verdict = crate::test_time::within_a_cpu_second("20,000 includes", || {
            reason(&src, &headers, &[])
        });
        assert_eq!(verdict, None);
        src.push_str("#include \"dir/header_20000.h\"\n");
        let verdict = reason(&src, &headers, &[]).unwrap();
        assert!(verdict.contains("header_20000.h"), "{verdict}");
    }
}
