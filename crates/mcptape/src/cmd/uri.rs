//! `mcptape uri`: RFC 6570 expansion/matching and the `resources/read` sanitizer
//! ([`mcptape_uri`]) at the command line, for reviewers.
//!
//! Exit status: 0 on success; 1 when the input is rejected (the error kind, byte offset and
//! the rule in words are printed on stderr, e.g. `rejected: EscapesRoot at byte 20 (uri):
//! after removing dot segments …`; for `--dir` opens, the path instead of a byte offset) or a
//! template does not match; 2 on a usage error. With `--dir`, a file prints `bytes: N`; a
//! directory prints `kind: directory` (it has no bytes to read).

use std::process::ExitCode;

use anyhow::Context as _;
use mcptape_uri::fs::{ConfinedRoot, OpenError, OpenErrorKind};
use mcptape_uri::template::{Template, Value, Vars};
use mcptape_uri::{Root, SanitizeError};

/// `mcptape uri` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum UriCommand {
    /// Expand an RFC 6570 template: `mcptape uri expand 'file:///docs/{+path}' path=a/b.txt`.
    /// A variable given more than once becomes a list (`list=red list=green`).
    Expand {
        /// The RFC 6570 template (levels 1–4).
        template: String,
        /// Variables as `name=value` (split at the first `=`).
        vars: Vec<String>,
    },
    /// Match a URI against a template and print the percent-decoded variables, one `name=value`
    /// per line (lists as `name=a,b,c`).
    Match {
        /// The RFC 6570 template.
        template: String,
        /// The concrete URI.
        uri: String,
    },
    /// Resolve a URI against a root (decode once, RFC 3986 §5.2.4 remove_dot_segments,
    /// component-wise containment) and print the canonical URI, decoded path and relative path.
    Resolve {
        /// The root URI, e.g. `file:///srv/project/`.
        #[arg(long)]
        root: String,
        /// Also open the result below this real directory through `cap-std` (symlinks leaving
        /// it are rejected) and print its size in bytes (`kind: directory` for a directory).
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// The URI to resolve.
        uri: String,
    },
}

fn rejected(what: &str, err: &SanitizeError) -> ExitCode {
    eprintln!(
        "rejected: {} at byte {} ({what}): {}",
        err.kind().as_str(),
        err.offset(),
        err.kind().explain()
    );
    ExitCode::from(1)
}

/// A rejection while opening below `--dir`: the byte offset means nothing
/// there, so the path is named instead (and the I/O error for `Io`).
fn rejected_open(path: &str, err: &OpenError) -> ExitCode {
    let io = err
        .io_kind()
        .filter(|_| err.kind() == OpenErrorKind::Io)
        .map(|k| format!(" ({k})"))
        .unwrap_or_default();
    eprintln!(
        "rejected: {} (open {path}): {}{io}",
        err.kind().as_str(),
        err.kind().explain()
    );
    ExitCode::from(1)
}

fn template_or_exit(template: &str) -> Result<Template, ExitCode> {
    Template::parse(template).map_err(|e| {
        eprintln!("rejected: {} at byte {} (template)", e.kind(), e.offset());
        ExitCode::from(1)
    })
}

/// Runs `mcptape uri`.
///
/// # Errors
/// A malformed `name=value` argument, or a failure to write to stdout.
pub fn run(cmd: UriCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        UriCommand::Expand { template, vars } => {
            let tpl = match template_or_exit(&template) {
                Ok(t) => t,
                Err(code) => return Ok(code),
            };
            let mut values = Vars::new();
            for arg in &vars {
                let (name, value) = arg
                    .split_once('=')
                    .with_context(|| format!("variable {arg:?} is not name=value"))?;
                let merged = match values.get(name) {
                    None => Value::String(value.to_owned()),
                    Some(Value::String(prev)) => Value::List(vec![prev.clone(), value.to_owned()]),
                    Some(Value::List(prev)) => {
                        let mut l = prev.clone();
                        l.push(value.to_owned());
                        Value::List(l)
                    }
                    Some(Value::Assoc(_)) => anyhow::bail!("variable {name:?} is an assoc"),
                };
                values.insert(name, merged);
            }
            match tpl.expand(&values) {
                Ok(s) => {
                    println!("{s}");
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("rejected: {} at byte {} (expansion)", e.kind(), e.offset());
                    Ok(ExitCode::from(1))
                }
            }
        }
        UriCommand::Match { template, uri } => {
            let tpl = match template_or_exit(&template) {
                Ok(t) => t,
                Err(code) => return Ok(code),
            };
            match tpl.try_match_uri(&uri) {
                Ok(Some(vars)) => {
                    for (name, value) in vars.iter() {
                        match value {
                            Value::String(s) => println!("{name}={s}"),
                            Value::List(l) => println!("{name}={}", l.join(",")),
                            Value::Assoc(a) => {
                                let kv: Vec<String> =
                                    a.iter().map(|(k, v)| format!("{k},{v}")).collect();
                                println!("{name}={}", kv.join(","));
                            }
                        }
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Ok(None) => {
                    eprintln!("no match");
                    Ok(ExitCode::from(1))
                }
                Err(e) => {
                    eprintln!("rejected: {} at byte {} (uri)", e.kind(), e.offset());
                    Ok(ExitCode::from(1))
                }
            }
        }
        UriCommand::Resolve { root, dir, uri } => {
            let root = match Root::new(&root) {
                Ok(r) => r,
                Err(e) => return Ok(rejected("root", &e)),
            };
            let resolved = match root.resolve(&uri) {
                Ok(p) => p,
                Err(e) => return Ok(rejected("uri", &e)),
            };
            println!("uri: {}", resolved.to_uri());
            println!("path: {}", resolved.as_str());
            println!("relative: {}", resolved.relative());
            if let Some(dir) = dir {
                let confined = ConfinedRoot::open(&dir)
                    .with_context(|| format!("opening root directory {}", dir.display()))?;
                match confined.resolve_and_open(&resolved) {
                    Ok(file) => {
                        let meta = file.metadata().context("stat")?;
                        if meta.is_dir() {
                            println!("kind: directory");
                        } else {
                            println!("bytes: {}", meta.len());
                        }
                    }
                    Err(e) => {
                        let path = dir.join(resolved.relative());
                        return Ok(rejected_open(&path.display().to_string(), &e));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
