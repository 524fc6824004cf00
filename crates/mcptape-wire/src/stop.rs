//! The lexer's string kernel: one pass over a string's bytes to the first
//! byte that ends a plain run — `"` (the end), `\` (an escape) or a raw byte
//! below 0x20 (an error, RFC 8259 §7) — noting on the way whether any byte
//! before it is non-ASCII (only such a run needs a UTF-8 check, §8.1).
//!
//! One dispatch point, [`find_stop`]: AVX2 (32 bytes a step, detected at run
//! time) for long inputs, SSE2 (16 bytes a step, always present on x86-64),
//! and the scalar kernel, always compiled: the reference every test and the
//! fuzz target ([`crate::fuzzing::string_stop`]) run the SIMD kernels against.
//!
//! This replaces two passes (a `memchr2` to `"`/`\`, then a pass over the
//! run for control bytes and non-ASCII) with one.
#![allow(unsafe_code)]

/// Where a plain string run stops ([`find_stop`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stop {
    /// Offset of the first `"`, `\` or byte below 0x20; the input's length
    /// when there is none.
    pub(crate) at: usize,
    /// Whether a byte at or above 0x80 comes before [`Stop::at`].
    pub(crate) non_ascii: bool,
}

/// Which kernel runs [`find_stop_with`] (tests, fuzzing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopKernel {
    /// One byte at a time through a class table (the reference).
    Scalar,
    /// 16 bytes a step (x86-64 baseline).
    Sse2,
    /// 32 bytes a step (x86-64, detected at run time).
    Avx2,
}

impl StopKernel {
    /// Every kernel this CPU can run (the scalar one first).
    pub(crate) fn available() -> Vec<StopKernel> {
        #[allow(unused_mut)]
        let mut v = vec![StopKernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            v.push(StopKernel::Sse2);
            if std::arch::is_x86_feature_detected!("avx2") {
                v.push(StopKernel::Avx2);
            }
        }
        v
    }
}

/// Inputs at least this long (64 bytes) take the AVX2 kernel when the CPU
/// has it; shorter ones stop within a few SSE2 steps, where the run-time
/// check would cost more than it saves.
const AVX2_FROM: usize = 64;

/// Byte classes: `true` stops a plain run (`"`, `\`, bytes below 0x20).
const STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// The first byte of `s` that ends a plain string run, and whether a
/// non-ASCII byte comes before it (the one dispatch point; see the module
/// docs).
#[inline]
pub(crate) fn find_stop(s: &[u8]) -> Stop {
    #[cfg(target_arch = "x86_64")]
    {
        // The first 16 bytes inline: most strings (keys, ids, uris) end there.
        if let Some((mask, high)) = sse2::first_block(s) {
            if mask != 0 {
                let k = mask.trailing_zeros();
                return Stop {
                    at: k as usize,
                    non_ascii: high & ((1 << k) - 1) != 0,
                };
            }
            if s.len() >= 16 + AVX2_FROM && std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 is present (checked just above).
                let rest = unsafe { avx2::find_stop(&s[16..]) };
                return Stop {
                    at: 16 + rest.at,
                    non_ascii: rest.non_ascii || high != 0,
                };
            }
        }
        sse2::find_stop(s)
    }
    #[cfg(not(target_arch = "x86_64"))]
    scalar(s)
}

/// [`find_stop`] on `s`, with the run before the stop as `&str` when it is
/// all ASCII (then it is UTF-8 with no further check); `None` when it holds
/// a non-ASCII byte (the caller checks its UTF-8).
#[inline]
pub(crate) fn ascii_run(s: &[u8]) -> (Stop, Option<&str>) {
    let st = find_stop(s);
    let run = &s[..st.at];
    debug_assert_eq!(run.is_ascii(), !st.non_ascii);
    // SAFETY: the kernel saw no byte at or above 0x80 in `run`: ASCII, so
    // UTF-8 (the kernels are tested and fuzzed against the scalar one).
    let ascii = (!st.non_ascii).then(|| unsafe { std::str::from_utf8_unchecked(run) });
    (st, ascii)
}

/// Bytes [`head_stop`] looks at: 32 (keys, ids, method names and most
/// URIs end there).
pub(crate) const HEAD: usize = 32;

/// The first stop of `s` when it lies in its first [`HEAD`] bytes (all of
/// `s` when shorter), with whether a non-ASCII byte comes before it; `None`
/// when those bytes hold no stop (the caller then searches on).
#[inline]
pub(crate) fn head_stop(s: &[u8]) -> Option<Stop> {
    #[cfg(target_arch = "x86_64")]
    if let Some((mask, high)) = sse2::first_block(s) {
        if mask != 0 {
            let k = mask.trailing_zeros();
            return Some(Stop {
                at: k as usize,
                non_ascii: high & ((1 << k) - 1) != 0,
            });
        }
        let rest = s.get(16..).unwrap_or_default();
        if let Some((mask, high2)) = sse2::first_block(rest) {
            if mask == 0 {
                return None;
            }
            let k = mask.trailing_zeros();
            return Some(Stop {
                at: 16 + k as usize,
                non_ascii: high != 0 || high2 & ((1 << k) - 1) != 0,
            });
        }
        let st = scalar_from(s, 16, high != 0);
        return (st.at < s.len()).then_some(st);
    }
    let head = s.get(..HEAD).unwrap_or(s);
    let st = scalar(head);
    (st.at < head.len()).then_some(st)
}

/// Bytes [`block64`] reads at once: one mask bit per byte of a `u64`.
pub(crate) const BLOCK: usize = 64;

/// The stop mask and the high-bit mask of the first [`BLOCK`] bytes of `s`
/// (bit `i` for byte `i`: a `"`, `\` or byte below 0x20; a byte at or above
/// 0x80), for a loop that walks every stop of a block without searching it
/// again (a long string with many escapes). `None` when `s` is shorter, or
/// off x86-64 (the caller then takes [`find_stop`]).
#[inline]
pub(crate) fn block64(s: &[u8]) -> Option<(u64, u64)> {
    #[cfg(target_arch = "x86_64")]
    {
        let s = s.get(..BLOCK)?;
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is present (checked just above); `s` holds
            // `BLOCK` (64) bytes.
            return Some(unsafe { avx2::block64(s) });
        }
        let mut stops = 0u64;
        let mut high = 0u64;
        for (i, part) in s.chunks_exact(16).enumerate() {
            let (m, h) = sse2::first_block(part)?;
            stops |= u64::from(m) << (16 * i);
            high |= u64::from(h) << (16 * i);
        }
        Some((stops, high))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = s;
        None
    }
}

/// [`block64`] one byte at a time (the reference its tests compare with).
fn block64_scalar(s: &[u8]) -> Option<(u64, u64)> {
    let s = s.get(..BLOCK)?;
    let mut stops = 0u64;
    let mut high = 0u64;
    for (i, &b) in s.iter().enumerate() {
        stops |= u64::from(STOP[b as usize]) << i;
        high |= u64::from(b >= 0x80) << i;
    }
    Some((stops, high))
}

/// [`find_stop`] with a chosen kernel (one this CPU lacks runs the scalar
/// one).
pub(crate) fn find_stop_with(kernel: StopKernel, s: &[u8]) -> Stop {
    match kernel {
        StopKernel::Scalar => scalar(s),
        #[cfg(target_arch = "x86_64")]
        StopKernel::Sse2 => sse2::find_stop(s),
        #[cfg(target_arch = "x86_64")]
        StopKernel::Avx2 if std::arch::is_x86_feature_detected!("avx2") => {
            // SAFETY: AVX2 is present (checked just above).
            unsafe { avx2::find_stop(s) }
        }
        _ => scalar(s),
    }
}

/// The scalar kernel (the reference), from byte `from` of `s`, with
/// `non_ascii` already seen before it.
#[inline]
fn scalar_from(s: &[u8], from: usize, mut non_ascii: bool) -> Stop {
    for (i, &b) in s.iter().enumerate().skip(from) {
        if STOP[b as usize] {
            return Stop { at: i, non_ascii };
        }
        non_ascii |= b >= 0x80;
    }
    Stop {
        at: s.len(),
        non_ascii,
    }
}

/// The scalar kernel over all of `s`.
fn scalar(s: &[u8]) -> Stop {
    scalar_from(s, 0, false)
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::Stop;
    use std::arch::x86_64::*;

    /// The stop mask and the high-bit mask of the first 16 bytes of `s`
    /// (bit `i` for byte `i`); `None` when `s` is shorter.
    #[inline]
    pub(super) fn first_block(s: &[u8]) -> Option<(u32, u32)> {
        if s.len() < 16 {
            return None;
        }
        // SAFETY: SSE2 is part of the x86-64 baseline; `s` holds 16 bytes.
        Some(unsafe { block(s.as_ptr()) })
    }

    /// The stop mask and the high-bit mask of the 16 bytes at `p`.
    ///
    /// # Safety
    /// 16 bytes at `p` are readable; the CPU supports SSE2 (every x86-64
    /// CPU does).
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn block(p: *const u8) -> (u32, u32) {
        // SAFETY: the caller's contract (an unaligned load of 16 bytes).
        let v = unsafe { _mm_loadu_si128(p.cast()) };
        let ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v);
        let hit = _mm_or_si128(
            _mm_or_si128(
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
            ),
            ctl,
        );
        (_mm_movemask_epi8(hit) as u32, _mm_movemask_epi8(v) as u32)
    }

    /// SSE2 kernel: 16 bytes a step, the last partial block by the scalar
    /// kernel.
    #[inline]
    pub(super) fn find_stop(s: &[u8]) -> Stop {
        // SAFETY: SSE2 is part of the x86-64 baseline: every x86-64 CPU has it.
        unsafe { find_stop_sse2(s) }
    }

    /// See [`find_stop`].
    ///
    /// # Safety
    /// The CPU must support SSE2 (every x86-64 CPU does).
    #[inline]
    #[target_feature(enable = "sse2")]
    unsafe fn find_stop_sse2(s: &[u8]) -> Stop {
        let quote = _mm_set1_epi8(b'"' as i8);
        let slash = _mm_set1_epi8(b'\\' as i8);
        let ctl_max = _mm_set1_epi8(0x1f);
        let mut high = 0i32;
        let mut i = 0;
        while i + 16 <= s.len() {
            // SAFETY: `i + 16 <= s.len()`: the 16 bytes are inside `s`
            // (an unaligned load).
            let v = unsafe { _mm_loadu_si128(s.as_ptr().add(i).cast()) };
            // `v <= 0x1f` unsigned: min(v, 0x1f) == v.
            let ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, ctl_max), v);
            let hit = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
                ctl,
            );
            let mask = _mm_movemask_epi8(hit);
            let hi = _mm_movemask_epi8(v);
            if mask != 0 {
                let k = mask.trailing_zeros();
                let before = hi & ((1i32 << k) - 1);
                return Stop {
                    at: i + k as usize,
                    non_ascii: (high | before) != 0,
                };
            }
            high |= hi;
            i += 16;
        }
        super::scalar_from(s, i, high != 0)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Stop;
    use std::arch::x86_64::*;

    /// [`super::block64`] of 64 bytes, two 32-byte loads.
    ///
    /// # Safety
    /// The CPU must support AVX2; `s` holds at least 64 bytes.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn block64(s: &[u8]) -> (u64, u64) {
        debug_assert!(s.len() >= 64);
        let hits = |v: __m256i| {
            let ctl = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1f)), v);
            _mm256_or_si256(
                _mm256_or_si256(
                    _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)),
                    _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)),
                ),
                ctl,
            )
        };
        // SAFETY: the caller's contract: 64 bytes at `s` (two unaligned
        // 32-byte loads).
        let (a, b) = unsafe {
            let p = s.as_ptr();
            (
                _mm256_loadu_si256(p.cast()),
                _mm256_loadu_si256(p.add(32).cast()),
            )
        };
        let lo = |m: i32| u64::from(m as u32);
        (
            lo(_mm256_movemask_epi8(hits(a))) | lo(_mm256_movemask_epi8(hits(b))) << 32,
            lo(_mm256_movemask_epi8(a)) | lo(_mm256_movemask_epi8(b)) << 32,
        )
    }

    /// AVX2 kernel: an ASCII fast loop 128 bytes a step, then the exact
    /// loops, 64 bytes a step (two 32-byte blocks, one test), then 32, the
    /// rest by the SSE2 kernel.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn find_stop(s: &[u8]) -> Stop {
        let quote = _mm256_set1_epi8(b'"' as i8);
        let slash = _mm256_set1_epi8(b'\\' as i8);
        let ctl_max = _mm256_set1_epi8(0x1f);
        let hits = |v: __m256i| {
            let ctl = _mm256_cmpeq_epi8(_mm256_min_epu8(v, ctl_max), v);
            _mm256_or_si256(
                _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, slash)),
                ctl,
            )
        };
        // The high bits of every block passed whole.
        let mut high = _mm256_setzero_si256();
        let mut i = 0;
        // ASCII fast loop, 128 bytes a step: a signed `v < 0x20` is true for
        // the control bytes and for every non-ASCII byte, so a step that
        // finds nothing holds neither; the first that does hands over to
        // the exact loops below (nothing before it is non-ASCII).
        let below = _mm256_set1_epi8(0x20);
        let rough = |v: __m256i| {
            _mm256_or_si256(
                _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, slash)),
                _mm256_cmpgt_epi8(below, v),
            )
        };
        while i + 128 <= s.len() {
            // SAFETY: `i + 128 <= s.len()`: the four 32-byte loads are inside `s`.
            let (a, b, c, d) = unsafe {
                let p = s.as_ptr().add(i);
                (
                    _mm256_loadu_si256(p.cast()),
                    _mm256_loadu_si256(p.add(32).cast()),
                    _mm256_loadu_si256(p.add(64).cast()),
                    _mm256_loadu_si256(p.add(96).cast()),
                )
            };
            let any = _mm256_or_si256(
                _mm256_or_si256(rough(a), rough(b)),
                _mm256_or_si256(rough(c), rough(d)),
            );
            if _mm256_testz_si256(any, any) == 0 {
                break;
            }
            i += 128;
        }
        let found = |i: usize, v: __m256i, mask: i32, high: __m256i| {
            let k = mask.trailing_zeros();
            let before = _mm256_movemask_epi8(v) as u32 & ((1u64 << k) - 1) as u32;
            Stop {
                at: i + k as usize,
                non_ascii: before != 0 || _mm256_movemask_epi8(high) != 0,
            }
        };
        while i + 64 <= s.len() {
            // SAFETY: `i + 64 <= s.len()`: both 32-byte loads are inside `s`.
            let (a, b) = unsafe {
                let p = s.as_ptr().add(i);
                (
                    _mm256_loadu_si256(p.cast()),
                    _mm256_loadu_si256(p.add(32).cast()),
                )
            };
            let (ha, hb) = (hits(a), hits(b));
            if _mm256_testz_si256(_mm256_or_si256(ha, hb), _mm256_or_si256(ha, hb)) == 0 {
                let ma = _mm256_movemask_epi8(ha);
                if ma != 0 {
                    return found(i, a, ma, high);
                }
                high = _mm256_or_si256(high, a);
                return found(i + 32, b, _mm256_movemask_epi8(hb), high);
            }
            high = _mm256_or_si256(high, _mm256_or_si256(a, b));
            i += 64;
        }
        while i + 32 <= s.len() {
            // SAFETY: `i + 32 <= s.len()`: the load is inside `s`.
            let a = unsafe { _mm256_loadu_si256(s.as_ptr().add(i).cast()) };
            let ma = _mm256_movemask_epi8(hits(a));
            if ma != 0 {
                return found(i, a, ma, high);
            }
            high = _mm256_or_si256(high, a);
            i += 32;
        }
        let rest = super::sse2::find_stop(&s[i..]);
        Stop {
            at: i + rest.at,
            non_ascii: rest.non_ascii || _mm256_movemask_epi8(high) != 0,
        }
    }
}

/// Every kernel, and the dispatch point, give the scalar kernel's answer on
/// `s` and on each of its first 40 suffixes (every alignment of a 32-byte
/// step); panics otherwise (the tests' and the fuzz target's property).
pub(crate) fn kernels_agree(s: &[u8]) {
    for from in 0..s.len().min(40) {
        let want = scalar(&s[from..]);
        for k in StopKernel::available() {
            assert_eq!(
                find_stop_with(k, &s[from..]),
                want,
                "{k:?} from {from}: {s:?}"
            );
        }
        assert_eq!(find_stop(&s[from..]), want, "dispatch from {from}");
        let head = want.at < s.len() - from && want.at < HEAD;
        assert_eq!(
            head_stop(&s[from..]),
            head.then_some(want),
            "head_stop from {from}"
        );
        if let Some(b) = block64(&s[from..]) {
            assert_eq!(Some(b), block64_scalar(&s[from..]), "block64 from {from}");
        }
    }
}

/// A xorshift64 generator from `seed` (not 0): the tests' pseudo-random
/// inputs, the same on every run.
#[cfg(test)]
pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agree(s: &[u8]) {
        kernels_agree(s);
    }

    #[test]
    fn every_stop_byte_at_every_position_of_every_length_up_to_260() {
        for len in 0..=260usize {
            let plain = vec![b'a'; len];
            assert_eq!(
                find_stop(&plain),
                Stop {
                    at: len,
                    non_ascii: false
                }
            );
            agree(&plain);
            for at in 0..len {
                for stop in [b'"', b'\\', 0x00, 0x01, 0x0a, 0x1f] {
                    let mut s = plain.clone();
                    s[at] = stop;
                    for k in StopKernel::available() {
                        assert_eq!(
                            find_stop_with(k, &s),
                            Stop {
                                at,
                                non_ascii: false
                            },
                            "{k:?} len {len} byte {stop:#x} at {at}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn non_ascii_counts_only_before_the_stop() {
        for len in 1..=260usize {
            for hi in 0..len {
                for stop_at in [0, hi / 2, hi, hi + 1, len] {
                    let mut s = vec![b'x'; len];
                    s[hi] = 0xc3;
                    if stop_at < len {
                        s[stop_at] = b'"';
                    }
                    let want = Stop {
                        at: if stop_at < len { stop_at } else { len },
                        non_ascii: hi < stop_at,
                    };
                    for k in StopKernel::available() {
                        assert_eq!(
                            find_stop_with(k, &s),
                            want,
                            "{k:?} len {len} 0xc3 at {hi}, stop at {stop_at}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn bytes_next_to_the_stop_classes_are_plain() {
        // 0x20 (space), 0x21 `!`, 0x23 `#`, 0x5b `[`, 0x5d `]`, 0x7f DEL, 0x80, 0xff.
        let s: Vec<u8> = [0x20u8, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff]
            .iter()
            .copied()
            .cycle()
            .take(200)
            .collect();
        for k in StopKernel::available() {
            assert_eq!(
                find_stop_with(k, &s),
                Stop {
                    at: 200,
                    non_ascii: true
                },
                "{k:?}"
            );
        }
        agree(&s);
    }

    #[test]
    fn block64_masks_every_stop_and_high_byte_at_every_position() {
        let plain = [b'a'; BLOCK];
        assert_eq!(block64(&plain[..BLOCK - 1]), None);
        if cfg!(target_arch = "x86_64") {
            assert_eq!(block64(&plain), Some((0, 0)));
        }
        for at in 0..BLOCK {
            for (b, stop, high) in [
                (b'"', true, false),
                (b'\\', true, false),
                (0x00, true, false),
                (0x1f, true, false),
                (0x20, false, false),
                (0x7f, false, false),
                (0x80, false, true),
                (0xff, false, true),
            ] {
                let mut s = plain;
                s[at] = b;
                let want = (u64::from(stop) << at, u64::from(high) << at);
                assert_eq!(block64_scalar(&s), Some(want), "{b:#x} at {at}");
                if cfg!(target_arch = "x86_64") {
                    assert_eq!(block64(&s), Some(want), "{b:#x} at {at}");
                }
            }
        }
    }

    /// A differential on pseudo-random bytes, biased to the classes that
    /// matter (a stop byte about once per 150 bytes, non-ASCII once per 40).
    #[test]
    fn kernels_agree_on_pseudo_random_inputs() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let len = (next() % 400) as usize;
            let s: Vec<u8> = (0..len)
                .map(|_| match next() % 300 {
                    0 => b'"',
                    1 => b'\\',
                    2 => (next() % 0x20) as u8,
                    3..=10 => 0x80 | (next() as u8),
                    _ => b'A' + (next() % 26) as u8,
                })
                .collect();
            agree(&s);
        }
    }
}
