//! The serde-based paths (`scalar` with `serde_json`, `simd` with `sonic-rs`):
//! `DeserializeSeed`s that apply the same rules as the fused parser (duplicate
//! keys, nesting depth, finite numbers, schema) and write straight into the
//! arenas of a [`DecodedReadResult`] — blobs are decoded from the borrowed
//! input string, no intermediate `String` per blob.

use super::base64::{Path, decode_append};
use super::{Body, DecodedReadResult, EntrySpan, MAX_NESTING_DEPTH};
use serde::de::{self, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;
use std::ops::Range;

/// Decodes one `resources/read` response from any serde `Deserializer` into
/// `out` (cleared first), applying the codec's strict rules. `input` must be
/// the bytes the deserializer reads (used to size the blob arena once).
/// With `decode_blobs` false, blobs are only length-checked (JSON-parse
/// benches). Errors: the deserializer's error type; callers map it to a
/// [`super::CodecError`] through the reference scan. Hidden: for benches
/// comparing JSON parsers (e.g. `simd-json`).
pub fn decode_with_deserializer<'de, D: Deserializer<'de>>(
    de: D,
    input: &[u8],
    b64: Path,
    out: &mut DecodedReadResult,
    decode_blobs: bool,
) -> Result<(), D::Error> {
    out.clear();
    let ctx = Ctx {
        input,
        b64,
        decode_blobs,
    };
    de.deserialize_map(ObjectSeed {
        ctx: &ctx,
        out,
        level: Level::Top,
        depth: 1,
    })
}

struct Ctx<'i> {
    input: &'i [u8],
    b64: Path,
    decode_blobs: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Result,
    Entry,
}

/// A key, borrowed when it had no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Duplicate-key detector (linear for small objects, hashed past 16 keys).
#[derive(Default)]
struct Seen {
    keys: Vec<String>,
    set: Option<HashSet<String>>,
}

impl Seen {
    fn insert<E: de::Error>(&mut self, k: &str) -> Result<(), E> {
        let dup = match &mut self.set {
            Some(set) => !set.insert(k.to_owned()),
            None => {
                let d = self.keys.iter().any(|x| x == k);
                self.keys.push(k.to_owned());
                if self.keys.len() > 16 {
                    self.set = Some(self.keys.drain(..).collect());
                }
                d
            }
        };
        if dup {
            Err(E::custom(format_args!("duplicate key {k:?}")))
        } else {
            Ok(())
        }
    }
}

/// `impl DeserializeSeed for $seed`: the seed is its own [`Visitor`] (of
/// `Value = $value`), handed to the deserializer's `$method`.
macro_rules! seed_through {
    ($seed:ty, $value:ty, $method:ident) => {
        impl<'de> DeserializeSeed<'de> for $seed {
            type Value = $value;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<$value, D::Error> {
                d.$method(self)
            }
        }
    };
}

struct ObjectSeed<'c, 'i, 'o> {
    ctx: &'c Ctx<'i>,
    out: &'o mut DecodedReadResult,
    level: Level,
    depth: usize,
}

seed_through!(ObjectSeed<'_, '_, '_>, (), deserialize_map);

impl<'de> Visitor<'de> for ObjectSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        within_depth::<A::Error>(self.depth)?;
        let mut seen = Seen::default();
        let (mut a, mut b, mut c) = (false, false, false);
        let mut uri: Option<Range<usize>> = None;
        let mut mime: Option<Range<usize>> = None;
        let mut body: Option<Body> = None;
        let ctx = self.ctx;
        let out = self.out;
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            seen.insert::<A::Error>(&k)?;
            match (self.level, &*k) {
                (Level::Top, "jsonrpc") => {
                    a = true;
                    let v: Key<'de> = map.next_value()?;
                    if v.0 != "2.0" {
                        return Err(A::Error::custom("jsonrpc must be 2.0"));
                    }
                }
                (Level::Top, "id") => {
                    b = true;
                    map.next_value_seed(IdSeed)?;
                }
                (Level::Top, "result") => {
                    c = true;
                    map.next_value_seed(ObjectSeed {
                        ctx,
                        out: &mut *out,
                        level: Level::Result,
                        depth: self.depth + 1,
                    })?;
                }
                (Level::Result, "contents") => {
                    a = true;
                    map.next_value_seed(ContentsSeed {
                        ctx,
                        out: &mut *out,
                        depth: self.depth + 1,
                    })?;
                }
                (Level::Entry, "uri") => {
                    uri = Some(map.next_value_seed(StrSeed(&mut out.strings))?);
                }
                (Level::Entry, "mimeType") => {
                    mime = Some(map.next_value_seed(StrSeed(&mut out.strings))?);
                }
                (Level::Entry, "text") => {
                    if body.is_some() {
                        return Err(A::Error::custom("both text and blob"));
                    }
                    body = Some(Body::Text(map.next_value_seed(StrSeed(&mut out.strings))?));
                }
                (Level::Entry, "blob") => {
                    if body.is_some() {
                        return Err(A::Error::custom("both text and blob"));
                    }
                    body = Some(Body::Blob(map.next_value_seed(BlobSeed {
                        ctx,
                        out: &mut *out,
                    })?));
                }
                _ => map.next_value_seed(Strict {
                    depth: self.depth + 1,
                })?,
            }
        }
        match self.level {
            Level::Top if !(a && b && c) => Err(A::Error::custom("missing jsonrpc/id/result")),
            Level::Result if !a => Err(A::Error::missing_field("contents")),
            Level::Entry => {
                let uri = uri.ok_or_else(|| A::Error::missing_field("uri"))?;
                let body = body.ok_or_else(|| A::Error::custom("neither text nor blob"))?;
                out.entries.push(EntrySpan {
                    uri,
                    mime_type: mime,
                    body,
                });
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

struct ContentsSeed<'c, 'i, 'o> {
    ctx: &'c Ctx<'i>,
    out: &'o mut DecodedReadResult,
    depth: usize,
}

seed_through!(ContentsSeed<'_, '_, '_>, (), deserialize_seq);

impl<'de> Visitor<'de> for ContentsSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        within_depth::<A::Error>(self.depth)?;
        while seq
            .next_element_seed(ObjectSeed {
                ctx: self.ctx,
                out: &mut *self.out,
                level: Level::Entry,
                depth: self.depth + 1,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// `id`: a string or a finite number.
struct IdSeed;

seed_through!(IdSeed, (), deserialize_any);

impl<'de> Visitor<'de> for IdSeed {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or a number")
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        finite(v)
    }
}

/// `too deep` for a container at nesting `depth` past [`MAX_NESTING_DEPTH`].
fn within_depth<E: de::Error>(depth: usize) -> Result<(), E> {
    if depth > MAX_NESTING_DEPTH {
        Err(E::custom("too deep"))
    } else {
        Ok(())
    }
}

fn finite<E: de::Error>(v: f64) -> Result<(), E> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(E::custom("number out of range"))
    }
}

/// A string appended to the strings arena; returns its range.
struct StrSeed<'o>(&'o mut String);

seed_through!(StrSeed<'_>, Range<usize>, deserialize_str);

impl<'de> Visitor<'de> for StrSeed<'_> {
    type Value = Range<usize>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Range<usize>, E> {
        let start = self.0.len();
        self.0.push_str(v);
        Ok(start..self.0.len())
    }
}

/// A `blob` string, base64-decoded from the borrowed input into the arena.
struct BlobSeed<'c, 'i, 'o> {
    ctx: &'c Ctx<'i>,
    out: &'o mut DecodedReadResult,
}

seed_through!(BlobSeed<'_, '_, '_>, Range<usize>, deserialize_str);

impl<'de> Visitor<'de> for BlobSeed<'_, '_, '_> {
    type Value = Range<usize>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a base64 string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Range<usize>, E> {
        // Size the arena once for the rest of the response when the string
        // lies inside the input (borrowed); else for this blob alone.
        let base = self.ctx.input.as_ptr() as usize;
        let at = v.as_ptr() as usize;
        let remaining = if at >= base && at - base <= self.ctx.input.len() {
            self.ctx.input.len() - (at - base)
        } else {
            v.len()
        };
        let start = self.out.blobs.len();
        if self.ctx.decode_blobs {
            self.out.reserve_blobs_for(remaining);
            decode_append(self.ctx.b64, v.as_bytes(), &mut self.out.blobs)
                .map_err(|e| E::custom(format_args!("blob: {e}")))?;
        } else if !v.len().is_multiple_of(4) {
            return Err(E::custom("blob length"));
        }
        Ok(start..self.out.blobs.len())
    }
}

/// Any value, validated (duplicate keys, depth, finite numbers) and dropped;
/// `depth` is the nesting depth a container here has (1 at the root). Also
/// the serde side of the wire's fuzz oracles (`fuzzing`).
pub(crate) struct Strict {
    pub(crate) depth: usize,
}

seed_through!(Strict, (), deserialize_any);

impl<'de> Visitor<'de> for Strict {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        finite(v)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        within_depth::<A::Error>(self.depth)?;
        while seq
            .next_element_seed(Strict {
                depth: self.depth + 1,
            })?
            .is_some()
        {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        within_depth::<A::Error>(self.depth)?;
        let mut seen = Seen::default();
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            seen.insert::<A::Error>(&k)?;
            map.next_value_seed(Strict {
                depth: self.depth + 1,
            })?;
        }
        Ok(())
    }
}
