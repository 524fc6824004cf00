//! The flat on-disk form of a record line and its conversion to and from the
//! typed [`Record`]. `serde_json::value::RawValue` cannot pass through an
//! internally tagged enum or `#[serde(flatten)]`, so every line is read into
//! [`OnDisk`] (all fields optional) and then checked field by field.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::model::{Direction, Event, HttpMeta, HttpNote, Record};

/// `kind` of a record line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    Message,
    Noise,
    Stderr,
    Http,
    Protocol,
    Exit,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Message => "message",
            Kind::Noise => "noise",
            Kind::Stderr => "stderr",
            Kind::Http => "http",
            Kind::Protocol => "protocol",
            Kind::Exit => "exit",
        }
    }
}

/// Serialized form. Field order is the order on disk; a `None` field is left out.
struct OnDiskOut<'a> {
    t_us: u64,
    kind: Kind,
    dir: Option<Direction>,
    msg: Option<&'a RawValue>,
    msg_text: Option<&'a str>,
    http: Option<&'a HttpMeta>,
    redacted_pointers: Option<&'a Vec<String>>,
    note: Option<HttpNote>,
    detail: Option<&'a str>,
    line: Option<&'a str>,
    version: Option<&'a str>,
    code: Option<i32>,
    signal: Option<i32>,
}

impl Serialize for OnDiskOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("OnDiskOut", 13)?;
        out.serialize_field("tUs", &self.t_us)?;
        out.serialize_field("kind", &self.kind)?;
        /// Each optional field under its camelCase key, or skipped when `None`.
        macro_rules! optional {
            ($($key:literal: $field:ident),* $(,)?) => {$(
                match &self.$field {
                    Some(v) => out.serialize_field($key, v)?,
                    None => out.skip_field($key)?,
                }
            )*};
        }
        optional!(
            "dir": dir,
            "msg": msg,
            "msgText": msg_text,
            "http": http,
            "redactedPointers": redacted_pointers,
            "note": note,
            "detail": detail,
            "line": line,
            "version": version,
            "code": code,
            "signal": signal,
        );
        out.end()
    }
}

/// Deserialized form; which fields must be present depends on `kind` (a missing
/// `Option` field is `None`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct OnDisk {
    pub(crate) t_us: u64,
    pub(crate) kind: Kind,
    pub(crate) dir: Option<Direction>,
    pub(crate) msg: Option<Box<RawValue>>,
    pub(crate) msg_text: Option<String>,
    pub(crate) http: Option<HttpMeta>,
    pub(crate) redacted_pointers: Option<Vec<String>>,
    pub(crate) note: Option<HttpNote>,
    pub(crate) detail: Option<String>,
    pub(crate) line: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) code: Option<i32>,
    pub(crate) signal: Option<i32>,
}

/// One record as its line, `\n` included.
pub(crate) fn record_line(record: &Record) -> Vec<u8> {
    let mut out = OnDiskOut {
        t_us: record.t_us,
        kind: Kind::Message,
        dir: None,
        msg: None,
        msg_text: None,
        http: None,
        redacted_pointers: None,
        note: None,
        detail: None,
        line: None,
        version: None,
        code: None,
        signal: None,
    };
    match &record.event {
        Event::Message {
            dir,
            msg,
            http,
            redacted_pointers,
        } => {
            out.dir = Some(*dir);
            out.redacted_pointers = (!redacted_pointers.is_empty()).then_some(redacted_pointers);
            if memchr_line_break(msg.get()) {
                out.msg_text = Some(msg.get());
            } else {
                out.msg = Some(msg);
            }
            out.http = http.as_ref();
        }
        Event::Noise { dir, line } => {
            out.kind = Kind::Noise;
            out.dir = Some(*dir);
            out.line = Some(line);
        }
        Event::Http {
            dir,
            http,
            note,
            detail,
        } => {
            out.kind = Kind::Http;
            out.dir = Some(*dir);
            out.http = Some(http);
            out.note = Some(*note);
            out.detail = detail.as_deref();
        }
        Event::Stderr { line } => {
            out.kind = Kind::Stderr;
            out.line = Some(line);
        }
        Event::Protocol { version } => {
            out.kind = Kind::Protocol;
            out.version = Some(version);
        }
        Event::Exit { code, signal } => {
            out.kind = Kind::Exit;
            out.code = *code;
            out.signal = *signal;
        }
    }
    // Serializing this struct cannot fail: every field is a string, number,
    // enum or a RawValue that is already valid JSON.
    let mut v = match serde_json::to_vec(&out) {
        Ok(v) => v,
        Err(e) => unreachable!("serializing a record cannot fail: {e}"),
    };
    v.push(b'\n');
    v
}

fn memchr_line_break(s: &str) -> bool {
    s.bytes().any(|b| b == b'\n' || b == b'\r')
}

/// Why a parsed line is not a valid record (field-level checks after serde).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Invalid {
    Missing(&'static str, Kind),
    Unexpected(&'static str, Kind),
    BadMsgText(String),
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Invalid::Missing(field, kind) => {
                write!(
                    f,
                    "field `{field}` is required for kind `{}`",
                    kind.as_str()
                )
            }
            Invalid::Unexpected(field, kind) => {
                write!(
                    f,
                    "field `{field}` is not allowed for kind `{}`",
                    kind.as_str()
                )
            }
            Invalid::BadMsgText(e) => write!(f, "`msgText` is not one JSON value: {e}"),
        }
    }
}

impl OnDisk {
    pub(crate) fn into_record(self) -> Result<Record, Invalid> {
        let k = self.kind;
        let present = [
            ("dir", self.dir.is_some()),
            ("msg", self.msg.is_some()),
            ("msgText", self.msg_text.is_some()),
            ("http", self.http.is_some()),
            ("redactedPointers", self.redacted_pointers.is_some()),
            ("note", self.note.is_some()),
            ("detail", self.detail.is_some()),
            ("line", self.line.is_some()),
            ("version", self.version.is_some()),
            ("code", self.code.is_some()),
            ("signal", self.signal.is_some()),
        ];
        // The first of `names`, in their order, that the line has is an error.
        let deny = |names: &[&'static str]| -> Result<(), Invalid> {
            match names
                .iter()
                .find(|n| present.iter().any(|(m, p)| *p && m == *n))
            {
                Some(n) => Err(Invalid::Unexpected(n, k)),
                None => Ok(()),
            }
        };
        if k != Kind::Http {
            deny(&["note", "detail"])?;
        }
        if k != Kind::Message {
            deny(&["redactedPointers"])?;
        }
        let event = match k {
            Kind::Http => {
                deny(&["msg", "msgText", "line", "version", "code", "signal"])?;
                Event::Http {
                    dir: self.dir.ok_or(Invalid::Missing("dir", k))?,
                    http: self.http.ok_or(Invalid::Missing("http", k))?,
                    note: self.note.ok_or(Invalid::Missing("note", k))?,
                    detail: self.detail,
                }
            }
            Kind::Message => {
                deny(&["line", "version", "code", "signal"])?;
                let dir = self.dir.ok_or(Invalid::Missing("dir", k))?;
                let msg = match (self.msg, self.msg_text) {
                    (Some(m), None) => m,
                    (None, Some(t)) => {
                        let v = RawValue::from_string(t.clone())
                            .map_err(|e| Invalid::BadMsgText(e.to_string()))?;
                        if v.get().len() != t.len() {
                            return Err(Invalid::BadMsgText(
                                "whitespace around the value".to_owned(),
                            ));
                        }
                        v
                    }
                    (Some(_), Some(_)) => return Err(Invalid::Unexpected("msgText", k)),
                    (None, None) => return Err(Invalid::Missing("msg", k)),
                };
                Event::Message {
                    dir,
                    msg,
                    http: self.http,
                    redacted_pointers: self.redacted_pointers.unwrap_or_default(),
                }
            }
            Kind::Noise | Kind::Stderr => {
                deny(&["msg", "msgText", "http", "version", "code", "signal"])?;
                let line = self.line.ok_or(Invalid::Missing("line", k))?;
                if k == Kind::Noise {
                    Event::Noise {
                        dir: self.dir.ok_or(Invalid::Missing("dir", k))?,
                        line,
                    }
                } else {
                    deny(&["dir"])?;
                    Event::Stderr { line }
                }
            }
            Kind::Protocol => {
                deny(&["dir", "msg", "msgText", "http", "line", "code", "signal"])?;
                Event::Protocol {
                    version: self.version.ok_or(Invalid::Missing("version", k))?,
                }
            }
            Kind::Exit => {
                deny(&["dir", "msg", "msgText", "http", "line", "version"])?;
                Event::Exit {
                    code: self.code,
                    signal: self.signal,
                }
            }
        };
        Ok(Record {
            t_us: self.t_us,
            event,
        })
    }
}
