//! The `dynamic-loading` feature: no link-time dependency on the library; bindgen's `extern "C"` block
//! becomes a table of function pointers filled at run time (see `hip_sys::loader`).

/// Whether the feature is on for this build.
pub fn enabled() -> bool {
    std::env::var_os("CARGO_FEATURE_DYNAMIC_LOADING").is_some()
}

/// Turn bindgen's one `extern "C" { ... }` block (bindgen merges them) into an invocation of
/// `hip_sys::dynamic_functions!`, which declares the table and a wrapper per function with the same
/// signature. `get` is the path of the function returning the crate's table.
pub fn rewrite(code: &str, macro_path: &str, get: &str) -> String {
    let start = code
        .find("unsafe extern \"C\" {")
        .or_else(|| code.find("extern \"C\" {"))
        .expect("bindgen output has an extern \"C\" block");
    let open = start + code[start..].find('{').expect("block opens");
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close.expect("block closes");
    assert!(
        !code[close..].contains("extern \"C\" {"),
        "bindgen emitted more than one extern block: merge_extern_blocks must be on"
    );
    format!(
        "{}{macro_path}! {{ table: DynamicFunctions, get: {get};{}}}{}",
        &code[..start],
        &code[open + 1..close],
        &code[close + 1..]
    )
}
