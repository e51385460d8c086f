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
    invocation(code, macro_path, get, false)
}

/// [`rewrite`], and with `export` each function also exported under its C name (`#[no_mangle]`).
fn invocation(code: &str, macro_path: &str, get: &str, export: bool) -> String {
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
    let export = if export { ", export" } else { "" };
    format!(
        "{}{macro_path}! {{ table: DynamicFunctions, get: {get}{export};{}}}{}",
        &code[..start],
        &code[open + 1..close],
        &code[close + 1..]
    )
}

/// The functions a compiled archive calls but does not define (`nm -u`), kept where `keep` says so: on
/// HIP's NVIDIA platform, the CUDA runtime, driver and NVRTC functions the headers' inline wrappers call.
pub fn undefined_functions(
    archive: &std::path::Path,
    keep: impl Fn(&str) -> bool,
) -> Result<Vec<String>, String> {
    let out = std::process::Command::new("nm")
        .args(["-u", "--format=just-symbols"])
        .arg(archive)
        .output()
        .map_err(|e| {
            format!(
                "`nm` (binutils) could not run on {}: {e}",
                archive.display()
            )
        })?;
    if !out.status.success() {
        return Err(format!("`nm -u {}` failed", archive.display()));
    }
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|s| keep(s))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// Exported trampolines for `functions` (`dynamic-loading` on HIP's NVIDIA platform): bindgen binds exactly
/// those functions from `header` (C mode, `clang_args`), and the result becomes an invocation of
/// `macro_path` (`hip_sys::dynamic_functions`) with `#[no_mangle]` on each function, so that the
/// compiled inline wrappers' calls land here and go through a table filled from a library at run time
/// (`get` returns it). `missing_trait` (`hip_sys::loader::Missing`) is implemented, as `Default`, for any
/// struct a function returns by value. The caller wraps the code in a module of its own.
pub fn trampolines(
    header: &str,
    clang_args: &[String],
    functions: &[String],
    macro_path: &str,
    get: &str,
    missing_trait: &str,
) -> Result<String, String> {
    if functions.is_empty() {
        return Ok(format!(
            "{macro_path}! {{ table: DynamicFunctions, get: {get}, export; }}\n"
        ));
    }
    let pattern = functions
        .iter()
        .map(|f| format!("^{f}$"))
        .collect::<Vec<_>>()
        .join("|");
    let code = bindgen::Builder::default()
        .header(header)
        .clang_args(clang_args)
        .allowlist_function(pattern)
        .default_enum_style(bindgen::EnumVariation::Consts)
        .prepend_enum_name(false)
        .derive_default(true)
        .generate_comments(false)
        .layout_tests(false)
        .merge_extern_blocks(true)
        .generate()
        .map_err(|e| format!("bindgen could not bind {} functions: {e}", functions.len()))?
        .to_string();
    let mut structs: Vec<&str> = code
        .split("-> ")
        .skip(1)
        .filter_map(|rest| rest.split(';').next())
        .map(str::trim)
        .filter(|ty| code.contains(&format!("pub struct {ty} ")))
        .collect();
    structs.sort();
    structs.dedup();
    let mut out = invocation(&code, macro_path, get, true);
    for ty in structs {
        out.push_str(&format!(
            "impl {missing_trait} for {ty} {{\n    fn library_missing() -> Self {{ Default::default() }}\n    \
             fn symbol_missing() -> Self {{ Default::default() }}\n}}\n"
        ));
    }
    Ok(out)
}
