//! Kernel signatures from PTX text (NVRTC's output on HIP's NVIDIA platform): each `.entry name(...)` with
//! its `.param` list, the `.target`, and `.maxntid` / `.reqntid`.
//!
//! PTX types a pointer parameter as a plain `.u64` (unless it carries `.ptr`), so a `.u64`/`.s64`/`.b64`
//! parameter's kind is [`ParamKind::Unknown`]: only its size can be checked. Every other parameter (`.f64`,
//! `.u32`, a `.b8` array for a struct) is a value. Offsets follow each parameter's `.align` (or its type's
//! size), as the PTX ABI lays out the parameter buffer.

use super::bad;
use super::kernel::{Kernel, Param, ParamKind, MAX_TARGET_LEN};
use crate::error::Result;

/// The kernels of PTX `text`.
///
/// Time and memory O(`text.len()`): comments are stripped in one pass, every `.entry`'s head (name,
/// parameter list, directives up to its `{`) is scanned a bounded number of times, and the `.target` that
/// every kernel gets a copy of is at most `MAX_TARGET_LEN` (256) bytes.
pub(crate) fn parse(text: &[u8]) -> Result<Vec<Kernel>> {
    let text = text.strip_suffix(b"\0").unwrap_or(text);
    let text = std::str::from_utf8(text).map_err(|_| not_a_code_object())?;
    let text = strip_comments(text);
    let mut words = text.split_whitespace();
    if !words.any(|w| w == ".version") {
        return Err(not_a_code_object());
    }
    let target = directive_arg(&text, ".target").unwrap_or_default();
    if target.len() > MAX_TARGET_LEN {
        return Err(bad(format!(
            "PTX: the `.target` value is {} bytes long; no target is longer than {MAX_TARGET_LEN}",
            target.len()
        )));
    }
    let mut kernels = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = find_word(rest, ".entry") {
        rest = &rest[at + ".entry".len()..];
        let trimmed = rest.trim_start();
        let name: String = trimmed
            .chars()
            .take_while(|&c| c.is_alphanumeric() || "_$.%".contains(c))
            .collect();
        if name.is_empty() {
            return Err(bad(format!(
                "PTX: `.entry` without a name near {:?}",
                first_chars(rest)
            )));
        }
        rest = &trimmed[name.len()..];
        let body_at = rest.find('{').unwrap_or(rest.len());
        let head = &rest[..body_at];
        let mut params = Vec::new();
        let mut end = 0u64;
        let mut after_params = head;
        if head.trim_start().starts_with('(') {
            let open = head.find('(').unwrap_or(0);
            let close = head[open..].find(')').map(|c| open + c).ok_or_else(|| {
                bad(format!(
                    "PTX: `.entry {name}`'s parameter list is not closed"
                ))
            })?;
            for decl in head[open + 1..close]
                .split(',')
                .filter(|d| !d.trim().is_empty())
            {
                let p = param(decl, end).ok_or_else(|| {
                    bad(format!(
                        "PTX: `.entry {name}`: bad parameter `{}`",
                        decl.trim()
                    ))
                })?;
                end = p.offset + p.size;
                params.push(p);
            }
            after_params = &head[close + 1..];
        }
        kernels.push(Kernel {
            symbol: name.clone(),
            name,
            target: target.clone(),
            params,
            kernarg_segment_size: Some(end),
            max_workgroup_size: threads(after_params, ".reqntid")
                .or_else(|| threads(after_params, ".maxntid")),
            ..Kernel::default()
        });
        rest = &rest[body_at..];
    }
    Ok(kernels)
}

fn not_a_code_object() -> crate::Error {
    bad("not a code object: expected an ELF file, an (uncompressed) clang offload bundle or PTX text".into())
}

fn first_chars(s: &str) -> String {
    s.trim_start().chars().take(40).collect()
}

/// Remove `//` and `/* */` comments (PTX has no comment markers inside strings worth keeping): a line
/// comment up to (not including) its newline, a block comment, replaced by a space, up to its `*/` (or the
/// end of the text).
///
/// One pass: O(`s.len()`) time. (Looking for the next `//` and the next `/*` afresh after every comment
/// was quadratic: 240 KB of `//` lines before one `/*` rescanned the rest of the text once per line.)
fn strip_comments(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut copied = 0; // `s[copied..i]` is text still to copy
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] != b'/' || !matches!(b[i + 1], b'/' | b'*') {
            i += 1;
            continue;
        }
        out.push_str(&s[copied..i]);
        let rest = &s[i + 2..];
        i = if b[i + 1] == b'/' {
            rest.find('\n').map_or(b.len(), |n| i + 2 + n)
        } else {
            out.push(' ');
            rest.find("*/").map_or(b.len(), |e| i + 2 + e + 2)
        };
        copied = i;
    }
    out.push_str(&s[copied..]);
    out
}

/// Byte index of `word` standing alone (not part of a longer directive).
fn find_word(s: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find(word) {
        let at = from + i;
        let before = s[..at].chars().next_back();
        let after = s[at + word.len()..].chars().next();
        let alone =
            |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'));
        if alone(before) && alone(after) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

fn directive_arg(s: &str, directive: &str) -> Option<String> {
    let at = find_word(s, directive)?;
    let arg = s[at + directive.len()..].split_whitespace().next()?;
    Some(arg.trim_end_matches(',').to_string())
}

fn threads(s: &str, directive: &str) -> Option<u32> {
    let at = find_word(s, directive)?;
    let line = s[at + directive.len()..].lines().next()?;
    line.split(',')
        .map(|d| d.trim().parse::<u32>().ok())
        .try_fold(1u32, |acc, d| acc.checked_mul(d?))
}

/// One `.param [.align N] .type [.ptr .space .align N] name[[count]]`, placed after `end`.
fn param(decl: &str, end: u64) -> Option<Param> {
    let mut words = decl.split_whitespace().peekable();
    if words.next()? != ".param" {
        return None;
    }
    let mut align = None;
    let mut ty = None;
    let mut pointer = false;
    let mut space = None;
    let mut name = None;
    while let Some(w) = words.next() {
        match w {
            ".align" => align = Some(words.next()?.parse::<u64>().ok()?),
            ".ptr" => pointer = true,
            ".global" | ".const" | ".local" | ".shared" => space = Some(w[1..].to_string()),
            w if w.starts_with('.') => ty = Some(w),
            w => name = Some(w),
        }
    }
    let ty = ty?;
    let elem = type_size(ty)?;
    let name = name?;
    let (name, count) = match name.split_once('[') {
        Some((n, c)) => (n, c.strip_suffix(']')?.trim().parse::<u64>().ok()?),
        None => (name, 1),
    };
    let size = elem.checked_mul(count)?;
    let align = align.unwrap_or(elem).max(1);
    if !align.is_power_of_two() {
        return None;
    }
    let offset = end.checked_add(align - 1)? & !(align - 1);
    offset.checked_add(size)?;
    let kind = if pointer {
        ParamKind::Pointer
    } else if size == 8 && count == 1 && matches!(ty, ".u64" | ".s64" | ".b64") {
        ParamKind::Unknown
    } else {
        ParamKind::Value
    };
    Some(Param {
        name: Some(name.to_string()),
        offset,
        size,
        align: Some(align),
        kind,
        value_kind: ty.to_string(),
        address_space: space,
        type_name: None,
    })
}

fn type_size(ty: &str) -> Option<u64> {
    if ty == ".pred" {
        return Some(1);
    }
    let bits: u64 = ty.get(2..)?.parse().ok()?;
    match (ty.as_bytes().get(1)?, bits) {
        (b'u' | b's' | b'b' | b'f', 8 | 16 | 32 | 64) => Some(bits / 8),
        (b'b', 128) => Some(16),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn comments_are_stripped_as_before() {
        for (text, stripped) in [
            ("a // b\nc", "a \nc"),
            ("a /* b */ c", "a   c"),
            ("a //* b\nc", "a \nc"),
            ("a /*/ b */c", "a  c"),
            ("a /* // */ b // /* c\nd", "a   b \nd"),
            ("a // no newline", "a "),
            ("a /* unclosed", "a  "),
            ("/", "/"),
            ("a/b*/c", "a/b*/c"),
            ("é//ü\nß", "é\nß"),
        ] {
            assert_eq!(super::strip_comments(text), stripped, "{text:?}");
        }
    }
}
