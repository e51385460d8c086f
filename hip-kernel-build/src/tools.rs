//! Running and finding the tools: commands, files, quoting, bundling.

use super::*;

/// Pack code objects into one clang offload bundle (`hipv4-amdgcn-amd-amdhsa--<target id>` entries, and
/// the empty host entry clang writes).
pub(crate) fn bundle(bundler: &Path, objects: &[(String, PathBuf)], dest: &Path) -> Result<()> {
    let mut targets = vec!["host-x86_64-unknown-linux-gnu".to_string()];
    let mut inputs = vec![format!("-input={}", null_device())];
    for (id, path) in objects {
        targets.push(format!("hipv4-{AMDGPU_TRIPLE}--{id}"));
        inputs.push(format!("-input={}", path.display()));
    }
    let mut cmd = Command::new(bundler);
    cmd.arg("-type=o")
        .arg(format!("-targets={}", targets.join(",")))
        .args(inputs)
        .arg(format!("-output={}", dest.display()));
    run_capture(&mut cmd, "bundling the AMD code objects", || {
        unreachable_tool(bundler)
    })?;
    Ok(())
}

pub(crate) fn null_device() -> &'static str {
    if cfg!(windows) {
        "NUL"
    } else {
        "/dev/null"
    }
}

pub(crate) fn unreachable_tool(p: &Path) -> Error {
    Error::ToolMissing {
        tool: p.display().to_string(),
        tried: vec![p.display().to_string()],
        install: "It was found a moment ago; check that it is still installed",
    }
}

/// Run, and return stdout; a spawn failure becomes `missing()`, a non-zero exit `CommandFailed` with the
/// end of its output.
pub(crate) fn run_capture(
    cmd: &mut Command,
    what: &str,
    missing: impl FnOnce() -> Error,
) -> Result<String> {
    let line = command_line(cmd);
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => {
            return Err(Error::CommandFailed {
                what: what.to_string(),
                command: line,
                output: e.to_string(),
            })
        }
    };
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        return Err(Error::CommandFailed {
            what: what.to_string(),
            command: line,
            output: format!("  {}\n{tail}", out.status),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

pub(crate) fn command_line(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// The first candidate that runs with `arg` and exits 0, resolved to a path where it came from `PATH`.
pub(crate) fn find_runnable(cands: &[PathBuf], arg: &str) -> Option<PathBuf> {
    cands.iter().find_map(|c| {
        let ok = Command::new(c)
            .arg(arg)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| which(c).unwrap_or_else(|| c.clone()))
    })
}

/// A program name resolved through `PATH` (a path with a separator is returned as is, if it exists).
pub(crate) fn which(p: &Path) -> Option<PathBuf> {
    if p.components().count() > 1 {
        return p.exists().then(|| p.to_path_buf());
    }
    let path: OsString = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(p))
        .find(|c| c.is_file())
}

pub(crate) fn show(cands: &[PathBuf]) -> Vec<String> {
    cands.iter().map(|c| c.display().to_string()).collect()
}

pub(crate) fn single_artifact(dir: &Path, extension: &'static str) -> Result<PathBuf> {
    let entries = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == extension))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(Error::NoArtifact {
            dir: dir.to_path_buf(),
            extension,
            found,
        }),
    }
}

pub(crate) fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub(crate) fn create_dir(d: &Path) -> Result<()> {
    std::fs::create_dir_all(d).map_err(|source| Error::Io {
        path: d.to_path_buf(),
        source,
    })
}

pub(crate) fn copy(from: &Path, to: &Path) -> Result<()> {
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|source| Error::Io {
            path: from.to_path_buf(),
            source,
        })
}

pub(crate) fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

pub(crate) fn toml_string(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
