//! `mcptape uri`: RFC 6570 expansion/matching and the `resources/read` sanitizer
//! ([`mcptape_uri`]) at the command line, for reviewers.
//!
//! Exit status: 0 on success; 1 when the input is rejected (what was rejected, the byte offset
//! and the rule in words are printed on stderr, e.g. `rejected: the uri at byte 20: after
//! removing dot segments …`; for `--dir` opens, the path instead of a byte offset) or a
//! template does not match; 2 on a usage error. With `--dir`, a file prints `bytes: N`; a
//! directory prints `kind: directory` (it has no bytes to read).

use std::process::ExitCode;

use anyhow::Context as _;
use mcptape_uri::fs::{ConfinedRoot, OpenError, OpenErrorKind};
use mcptape_uri::template::{Template, TemplateError, TemplateErrorKind, Value, Vars};
use mcptape_uri::{PathStyle, Root, SanitizeError};

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
    /// Match a URI against a template and print the variables, one `name=value` per line
    /// (lists as `name=a,b,c`), so that `uri expand` with them gives the URI back (exactly for a
    /// URI in RFC 3986 §6.2.2 normal form: uppercase hex, no `%XX` for a letter, digit or
    /// `-._~`, no raw non-ASCII — the form every expansion has).
    ///
    /// Decoded or not, per operator (RFC 6570 §3.2): `{+var}` and `{#var}` values are printed
    /// as matched, NOT decoded — those operators pass `%XX` through unchanged — so
    /// `file:///docs/{+path}` on `file:///docs/a/b%2Fc.txt` prints `path=a/b%2Fc.txt` (two
    /// segments, the second `b%2Fc.txt`), and `%20` stays `%20`. `{var}`, `{.var}`, `{/var}`,
    /// `{;var}`, `{?var}` and `{&var}` values are printed percent-decoded once (`My%20File` →
    /// `My File`, `%C3%BC` → `ü`): those operators encode every reserved character, so a raw
    /// `/` never matches them and a printed `/` was `%2F`; in `{var}`, `{.var}`, `{/var}` and
    /// `{;var}` such a `/` (or `\`) is refused as a traversal (below), in `{?var}`/`{&var}`
    /// (`?path=a%2Fb` → `path=a/b`) it is the value's own.
    ///
    /// A value that decodes to a path traversal is no match (exit 1, `no match: … decodes to a
    /// path traversal`, naming the value decoded once for every operator, `+`/`#` included: the
    /// check judges what a server reads), not passed on — the tricks `uri resolve` refuses, for every operator
    /// (query and fragment values included: servers join `?path=` values to a root as often as
    /// path segments): a control character (`%00`, `%0A`), a character Unicode NFKC folds into
    /// `.`, `/` or `\` (fullwidth `%EF%BC%8E%EF%BC%8E%EF%BC%8F`, `．．／`), a value of dots and
    /// spaces only (`..`, `...`, `..%20`), double encoding (`%252e`) and a leading drive letter
    /// (`C:`); a `/` or `\` decoded from `%2F` / `%5C` in a path-segment variable (`{var}`,
    /// `{.var}`, `{/var}`, `{;var}` cannot match a raw `/`), so `file://docs/{name}` does not
    /// match `file://docs/..%2F..%2Fetc%2Fpasswd`; in a `{+var}`, `{#var}`, `{?var}` or
    /// `{&var}` value, which may hold `/`, a leading `/` or `\` (an absolute path), an empty
    /// segment or a dots-only segment (`{?path}` does not match `?path=..%2F..%2Fetc%2Fpasswd`).
    Match {
        /// The RFC 6570 template.
        template: String,
        /// The concrete URI.
        uri: String,
    },
    /// Resolve a URI against a root (decode once, RFC 3986 §5.2.4 remove_dot_segments,
    /// component-wise containment) and print the canonical URI, decoded path and relative path.
    ///
    /// A character Unicode NFKC folds into `.`, `/` or `\` (fullwidth `%EF%BC%8E` `．`,
    /// `%EF%BC%8F` `／`, `‥`, `…`) is refused: normalizing filesystems and Windows read `．．／`
    /// as `../`. Except: without --windows the leaders `․` `‥` `…` are accepted inside a name
    /// that has another character than dots (`Wait….md`, a legal Linux and macOS name, which no
    /// Linux or macOS filesystem folds); a segment of only dots and leaders (`‥`, `…`) is
    /// refused.
    Resolve {
        /// The root URI, e.g. `file:///srv/project/`.
        #[arg(long)]
        root: String,
        /// Also open the result below this real directory through `cap-std` (symlinks leaving
        /// it are rejected) and print its size in bytes (`kind: directory` for a directory). A
        /// regular file with more than one hard link is refused (`HardLink`): a hard link
        /// inside the directory may name a file outside it, which no path check can see.
        #[arg(long)]
        dir: Option<std::path::PathBuf>,
        /// With --dir: also open regular files that have more than one hard link (only for a
        /// tree whose hard links you trust).
        #[arg(long, requires = "dir")]
        allow_hardlinks: bool,
        /// Read paths as Windows paths (RFC 8089 Appendix E.2), for the root and the URI:
        /// `file:///C:/Users/a.rs` resolves to `C:/Users/a.rs` (no leading `/`), the drive letter
        /// compares case-insensitively (`c:` = `C:`), `\` and `%5C` are separators (so `..\`
        /// is contained like `../`; `%2F` is still refused), UNC paths (`file://server/share`,
        /// `file:////server`) are refused as `UncPath`, and so are a `:` past the drive letter
        /// (`a.rs::$DATA`, `sub/c:x`: `AlternateDataStream`), a drive letter past the first
        /// segment (`sub/C:/Windows`: `DriveNotFirst`) and DOS device names (`CON`, `aux.txt`,
        /// `NUL`, `COM1`, `LPT1`; any case and extension: `ReservedDeviceName`). Not with `--dir`.
        #[arg(long, conflicts_with = "dir")]
        windows: bool,
        /// The URI to resolve.
        uri: String,
    },
}

fn rejected(what: &str, err: &SanitizeError) -> ExitCode {
    eprintln!(
        "rejected: the {what} at byte {}: {}",
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
    eprintln!("rejected: opening {path}: {}{io}", err.kind().explain());
    ExitCode::from(1)
}

/// A template, expansion or match rejection on stderr, with its byte offset;
/// exit code 1.
fn rejected_template(what: &str, e: &TemplateError) -> ExitCode {
    eprintln!(
        "rejected: the {what} at byte {}: {}",
        e.offset(),
        template_words(e.kind())
    );
    ExitCode::from(1)
}

/// A template or match error in words (RFC 6570 sections), for stderr.
fn template_words(kind: TemplateErrorKind) -> std::borrow::Cow<'static, str> {
    use mcptape_uri::template::{
        MAX_MATCH_DEPTH, MAX_MATCH_STEPS, MAX_MATCH_URI_BYTES, MAX_TEMPLATE_BYTES,
        MAX_TEMPLATE_VARS,
    };
    let words = match kind {
        TemplateErrorKind::TooLong => {
            return format!(
                "the template is longer than {MAX_TEMPLATE_BYTES} bytes (MAX_TEMPLATE_BYTES)"
            )
            .into();
        }
        TemplateErrorKind::UnclosedExpression => "a `{` has no closing `}` (RFC 6570 §2.2)",
        TemplateErrorKind::InvalidLiteral => {
            "a character that is not allowed in a literal (RFC 6570 §2.1: space, quote, <, >, \\, ^, `, |, }, control characters)"
        }
        TemplateErrorKind::MalformedEscape => "a `%` not followed by two hex digits",
        TemplateErrorKind::UnsupportedOperator => {
            "an operator reserved for future extensions (=, ',', !, @, |; RFC 6570 §2.2)"
        }
        TemplateErrorKind::InvalidVarName => {
            "an empty expression or a malformed variable name (RFC 6570 §2.3)"
        }
        TemplateErrorKind::InvalidPrefix => {
            "a prefix modifier that is not 1 to 9999 (RFC 6570 §2.4.1)"
        }
        TemplateErrorKind::PrefixOnComposite => {
            "a prefix modifier on a list or associative value (RFC 6570 §2.4.1: strings only)"
        }
        TemplateErrorKind::Rejected => "the RFC 6570 reference parser rejects this template",
        TemplateErrorKind::UriTooLong => {
            return format!(
                "the URI is longer than {MAX_MATCH_URI_BYTES} bytes (MAX_MATCH_URI_BYTES)"
            )
            .into();
        }
        TemplateErrorKind::MatchBudgetExceeded => {
            return format!("matching took more than {MAX_MATCH_STEPS} steps (MAX_MATCH_STEPS)")
                .into();
        }
        TemplateErrorKind::MatchTooDeep => {
            return format!(
                "the match's path holds more than {MAX_MATCH_DEPTH} states (MAX_MATCH_DEPTH)"
            )
            .into();
        }
        TemplateErrorKind::TooManyVars => {
            return format!(
                "the template has more than {MAX_TEMPLATE_VARS} variables (MAX_TEMPLATE_VARS)"
            )
            .into();
        }
        _ => "the template or URI is not valid",
    };
    words.into()
}

fn template_or_exit(template: &str) -> Result<Template, ExitCode> {
    Template::parse(template).map_err(|e| rejected_template("template", &e))
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
                    super::print_stdout(&format!("{s}\n"))?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => Ok(rejected_template("expansion", &e)),
            }
        }
        UriCommand::Match { template, uri } => {
            let tpl = match template_or_exit(&template) {
                Ok(t) => t,
                Err(code) => return Ok(code),
            };
            match tpl.try_match_uri(&uri) {
                Ok(Some(vars)) => {
                    let mut text = String::new();
                    for (name, value) in vars.iter() {
                        let v = match value {
                            Value::String(s) => s.clone(),
                            Value::List(l) => l.join(","),
                            Value::Assoc(a) => {
                                let kv: Vec<String> =
                                    a.iter().map(|(k, v)| format!("{k},{v}")).collect();
                                kv.join(",")
                            }
                        };
                        text.push_str(&format!("{name}={v}\n"));
                    }
                    super::print_stdout(&text)?;
                    Ok(ExitCode::SUCCESS)
                }
                Ok(None) => {
                    let why = tpl.traversal_rejections(&uri);
                    if why.is_empty() {
                        eprintln!("no match");
                    } else {
                        let list: Vec<String> =
                            why.iter().map(|(n, v)| format!("{n}={v:?}")).collect();
                        eprintln!(
                            "no match: the URI fits the template, but {} decodes to a path traversal (see `mcptape uri match --help`)",
                            list.join(", ")
                        );
                    }
                    Ok(ExitCode::from(1))
                }
                Err(e) => Ok(rejected_template("uri", &e)),
            }
        }
        UriCommand::Resolve {
            root,
            dir,
            allow_hardlinks,
            windows,
            uri,
        } => {
            let style = if windows {
                PathStyle::Windows
            } else {
                PathStyle::Posix
            };
            let root = match Root::with_style(&root, style) {
                Ok(r) => r,
                Err(e) => return Ok(rejected("root", &e)),
            };
            let resolved = match root.resolve(&uri) {
                Ok(p) => p,
                Err(e) => return Ok(rejected("uri", &e)),
            };
            super::print_stdout(&format!(
                "uri: {}\npath: {}\nrelative: {}\n",
                resolved.to_uri(),
                resolved.as_str(),
                resolved.relative()
            ))?;
            if let Some(dir) = dir {
                let confined = ConfinedRoot::open(&dir)
                    .with_context(|| format!("opening root directory {}", dir.display()))?
                    .allow_hardlinks(allow_hardlinks);
                match confined.resolve_and_open(&resolved) {
                    Ok(file) => {
                        let meta = file.metadata().context("stat")?;
                        if meta.is_dir() {
                            super::print_stdout("kind: directory\n")?;
                        } else {
                            super::print_stdout(&format!("bytes: {}\n", meta.len()))?;
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
