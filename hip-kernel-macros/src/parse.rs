//! The kernel grammar, parsed with `proc_macro` alone: `[attrs] [pub[(..)]] fn name(params) { body }`,
//! each parameter `[mut] ident: Type` with `Type` one of `In<E>`, `Out<E>`, `OutChunk<E, N>`,
//! `Shared<E>` / `Shared<E, K>` or a scalar `E`; a scalar is a primitive number, an element any
//! `DeviceValue` (the compiler checks that bound).

use proc_macro::{Delimiter, Group, Ident, Span, TokenStream, TokenTree};

/// The element and scalar types a kernel may use: the primitive numbers (`DeviceValue`).
pub const VALUES: [&str; 10] = [
    "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "f32", "f64",
];

/// What a parameter is to the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `In<E>`: read-only, checked reads.
    In,
    /// `Out<E>`: each thread reaches its own elements.
    Out,
    /// `OutChunk<E, N>`: each thread reaches its own chunks of `N` elements.
    OutChunk(usize),
    /// `OutBlock<E, N>`: each block its `N` elements, thread `t < N` of the block the `t`-th.
    OutBlock(usize),
    /// `Out2d<E>`: a row-major matrix whose row length the host passes; thread `(x, y)` element
    /// `(y, x)`.
    Out2d,
    /// `Shared<E, K>`: the block's shared memory, `K` slots per thread (no entry-point argument).
    Shared(usize),
    /// `E` by value.
    Scalar,
}

impl Role {
    /// Written by the kernel (passed with `arg_mut`).
    pub fn is_output(self) -> bool {
        matches!(
            self,
            Role::Out | Role::OutChunk(_) | Role::OutBlock(_) | Role::Out2d
        )
    }
}

/// One parameter.
pub struct Param {
    pub mutable: bool,
    pub name: Ident,
    pub role: Role,
    /// The element (or scalar) type's name, its last path segment (what the fingerprint hashes).
    pub elem: String,
    /// The element type as written (`hip_rs_kernel_types::Affine`), resolved in the user's scope.
    pub elem_path: String,
    /// The type as written (the body's parameter keeps it, so the user's imports are used).
    pub ty: TokenStream,
}

/// A parsed kernel.
pub struct Kernel {
    /// Outer attributes, kept (doc comments) on the generated items.
    pub attrs: Vec<TokenTree>,
    /// `pub`, `pub(crate)`, or nothing.
    pub vis: Vec<TokenTree>,
    pub name: Ident,
    pub params: Vec<Param>,
    pub body: Group,
}

/// A parse error: what was wrong, at which tokens.
pub struct ParseError {
    pub span: Span,
    pub message: String,
}

fn err<T>(span: Span, message: impl Into<String>) -> Result<T, ParseError> {
    Err(ParseError {
        span,
        message: message.into(),
    })
}

fn is_punct(t: &TokenTree, c: char) -> bool {
    matches!(t, TokenTree::Punct(p) if p.as_char() == c)
}

fn is_ident(t: &TokenTree, s: &str) -> bool {
    matches!(t, TokenTree::Ident(i) if i.to_string() == s)
}

/// Parse the item `#[kernel]` is on.
pub fn kernel(item: TokenStream) -> Result<Kernel, ParseError> {
    let tokens: Vec<TokenTree> = item.into_iter().collect();
    let mut i = 0;
    let mut attrs = Vec::new();
    while i + 1 < tokens.len() && is_punct(&tokens[i], '#') {
        attrs.push(tokens[i].clone());
        attrs.push(tokens[i + 1].clone());
        i += 2;
    }
    let mut vis = Vec::new();
    if i < tokens.len() && is_ident(&tokens[i], "pub") {
        vis.push(tokens[i].clone());
        i += 1;
        if let Some(TokenTree::Group(g)) = tokens.get(i) {
            if g.delimiter() == Delimiter::Parenthesis {
                vis.push(tokens[i].clone());
                i += 1;
            }
        }
    }
    let span_at = |i: usize| tokens.get(i).map_or(Span::call_site(), |t| t.span());
    for word in ["unsafe", "extern", "const", "async"] {
        if tokens.get(i).is_some_and(|t| is_ident(t, word)) {
            return err(
                span_at(i),
                format!(
                    "#[kernel] takes a plain safe `fn`, not `{word} fn`: the macro writes the entry point"
                ),
            );
        }
    }
    if !tokens.get(i).is_some_and(|t| is_ident(t, "fn")) {
        return err(
            span_at(i),
            "#[kernel] goes on a function: `fn name(...) { ... }`",
        );
    }
    i += 1;
    let name = match tokens.get(i) {
        Some(TokenTree::Ident(n)) => n.clone(),
        _ => return err(span_at(i), "expected the kernel's name"),
    };
    i += 1;
    if tokens.get(i).is_some_and(|t| is_punct(t, '<')) {
        return err(
            span_at(i),
            "a #[kernel] cannot be generic: each kernel is one exported entry point; write one #[kernel] \
             per element type, calling a generic helper",
        );
    }
    let args = match tokens.get(i) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => g.clone(),
        _ => return err(span_at(i), "expected the kernel's parameters"),
    };
    i += 1;
    if tokens.get(i).is_some_and(|t| is_punct(t, '-')) {
        return err(
            span_at(i),
            "a #[kernel] returns nothing: it writes its results through `Out<T>`",
        );
    }
    if tokens.get(i).is_some_and(|t| is_ident(t, "where")) {
        return err(span_at(i), "a #[kernel] takes no `where` clause");
    }
    let body = match tokens.get(i) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g.clone(),
        _ => return err(span_at(i), "expected the kernel's body `{ ... }`"),
    };
    if i + 1 != tokens.len() {
        return err(span_at(i + 1), "unexpected tokens after the kernel's body");
    }
    let params = split_params(args.stream())?
        .into_iter()
        .map(param)
        .collect::<Result<Vec<_>, _>>()?;
    if params.is_empty() {
        return err(
            args.span(),
            "a #[kernel] needs at least one `Out<T>` parameter to write to",
        );
    }
    Ok(Kernel {
        attrs,
        vis,
        name,
        params,
        body,
    })
}

/// The parameters' token lists, split at top-level commas (none inside `<...>`).
fn split_params(stream: TokenStream) -> Result<Vec<Vec<TokenTree>>, ParseError> {
    let mut out = vec![Vec::new()];
    let mut depth = 0i32;
    for t in stream {
        if is_punct(&t, '<') {
            depth += 1;
        } else if is_punct(&t, '>') {
            depth -= 1;
        } else if is_punct(&t, ',') && depth == 0 {
            out.push(Vec::new());
            continue;
        }
        out.last_mut().expect("never empty").push(t);
    }
    if out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    Ok(out)
}

/// One `[mut] name: Type`.
fn param(tokens: Vec<TokenTree>) -> Result<Param, ParseError> {
    let first = tokens.first().map_or(Span::call_site(), TokenTree::span);
    let mut i = 0;
    if tokens.first().is_some_and(|t| is_punct(t, '#')) {
        return err(first, "#[kernel] parameters take no attributes");
    }
    let mutable = tokens.first().is_some_and(|t| is_ident(t, "mut"));
    if mutable {
        i += 1;
    }
    let name = match tokens.get(i) {
        Some(TokenTree::Ident(n)) => n.clone(),
        _ => return err(first, "a #[kernel] parameter is `name: Type` (no patterns)"),
    };
    i += 1;
    if !tokens.get(i).is_some_and(|t| is_punct(t, ':')) {
        return err(name.span(), "expected `: Type` after the parameter's name");
    }
    i += 1;
    let ty = &tokens[i..];
    let ty_span = ty.first().map_or(name.span(), TokenTree::span);
    let text: String = ty
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join("");
    let text = text.replace(' ', "");
    // The last path segment (`hip_rs_kernel_types::device::In<f32>` is `In<f32>`).
    let last = match text.find('<') {
        Some(lt) => {
            let head = &text[..lt];
            let seg = head.rsplit("::").next().unwrap_or(head);
            format!("{seg}{}", &text[lt..])
        }
        None => text.rsplit("::").next().unwrap_or(&text).to_string(),
    };
    let refuse = |what: &str| -> Result<Param, ParseError> {
        err(
            ty_span,
            format!(
                "#[kernel] parameter `{name}: {text}`: {what}; a kernel takes `In<T>` (read-only input), \
                 `Out<T>`, `OutChunk<T, N>`, `OutBlock<T, N>` or `Out2d<T>` (each thread writes its own \
                 elements), `Shared<T>` or \
                 `Shared<T, K>` (the block's shared memory) or a scalar (one of {})",
                VALUES.join(", ")
            ),
        )
    };
    if text.starts_with('&') || text.starts_with('*') {
        return refuse(
            "references and raw pointers are not kernel parameters (a `&mut [T]` seen by every thread \
             would let two threads write one element)",
        );
    }
    for prefix in ["In<", "Out<", "OutChunk<", "OutBlock<", "Out2d<", "Shared<"] {
        let Some(rest) = last.strip_prefix(prefix) else {
            continue;
        };
        let inner = rest.strip_suffix('>').unwrap_or("");
        let (elem_path, count) = match inner.split_once(',') {
            Some((e, n)) => (e, Some(n)),
            None => (inner, None),
        };
        let elem = elem_path.rsplit("::").next().unwrap_or(elem_path);
        let is_path = !elem_path.is_empty()
            && elem_path
                .split("::")
                .enumerate()
                .all(|(i, seg)| (i == 0 && seg.is_empty()) || is_ident_text(seg));
        if !is_path {
            return refuse(&format!(
                "the element type `{elem_path}` is not a plain type name (a primitive number or a \
                 `DeviceValue` of hip_rs_kernel_types)"
            ));
        }
        let count = match (prefix, count) {
            ("In<" | "Out<" | "Out2d<", None) => 0,
            ("Shared<" | "OutBlock<", None) => 1,
            ("OutChunk<" | "OutBlock<" | "Shared<", Some(n)) => match parse_count(n) {
                Some(n) if n > 0 => n,
                _ => {
                    return refuse(&format!(
                        "`{n}` is not a count: write a positive integer literal (`{prefix}{elem_path}, 4>`)"
                    ))
                }
            },
            ("OutChunk<", None) => {
                return refuse("`OutChunk` needs its chunk length: `OutChunk<T, N>`, N > 0")
            }
            _ => return refuse("`In`, `Out` and `Out2d` take one type argument"),
        };
        let role = match prefix {
            "In<" => Role::In,
            "Out<" => Role::Out,
            "OutChunk<" => Role::OutChunk(count),
            "OutBlock<" => Role::OutBlock(count),
            "Out2d<" => Role::Out2d,
            _ => Role::Shared(count),
        };
        if role == Role::In && mutable {
            return err(
                first,
                format!("`In<T>` is read-only: `{name}` need not be `mut`"),
            );
        }
        return Ok(Param {
            mutable,
            name,
            role,
            elem: elem.to_string(),
            elem_path: elem_path.to_string(),
            ty: ty.iter().cloned().collect(),
        });
    }
    if VALUES.contains(&last.as_str()) && last == text {
        return Ok(Param {
            mutable,
            name,
            role: Role::Scalar,
            elem: text.clone(),
            elem_path: text,
            ty: ty.iter().cloned().collect(),
        });
    }
    refuse("not a kernel parameter type")
}

/// Whether `s` is a Rust identifier (ASCII).
fn is_ident_text(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An integer literal (`4`, `4usize`, `1_024`).
fn parse_count(s: &str) -> Option<usize> {
    let digits = s.strip_suffix("usize").unwrap_or(s).replace('_', "");
    digits.parse().ok()
}
