//! Base64 decode kernels for the fused path: decode the longest prefix made of
//! whole 4-symbol groups of the standard alphabet (RFC 4648 §4), and stop in
//! front of the first group holding anything else (`=`, `"`, `\`, ...).
//!
//! This is the one module of the codec that uses `unsafe` (SIMD loads/stores
//! and writes into a `Vec`'s spare capacity). The scalar kernel is always
//! compiled and every test runs it against the SIMD kernels on the same input.
//!
//! The AVX2 kernel is the "lookup: pshufb with bitmask" decoder of W. Muła and
//! D. Lemire, "Faster Base64 Encoding and Decoding using AVX2 Instructions",
//! ACM TWEB 12(3), 2018 (written here from the paper's description).
#![allow(unsafe_code)]

use super::base64::DECODE_TABLE;

/// Which base64 decode kernel the fused path runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kernel {
    /// Table-driven scalar code, always available (the reference).
    Scalar,
    /// 32 symbols → 24 bytes per step with AVX2 (x86-64, detected at run time).
    Avx2,
    /// 64 symbols → 48 bytes per step with AVX-512 VBMI (`vpermi2b` lookup,
    /// `vpermb` pack; x86-64, detected at run time). After W. Muła and
    /// D. Lemire, "Base64 encoding and decoding at almost the speed of a memory
    /// copy", Software: Practice and Experience 50(2), 2020.
    Avx512Vbmi,
}

impl Kernel {
    /// The fastest kernel this CPU supports (runtime detection, so a portable
    /// build still uses AVX2 where present).
    pub fn detect() -> Kernel {
        #[cfg(target_arch = "x86_64")]
        {
            if has_avx512vbmi() {
                return Kernel::Avx512Vbmi;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Kernel::Avx2;
            }
        }
        Kernel::Scalar
    }

    /// Every kernel this CPU can run (the scalar one first).
    pub fn available() -> Vec<Kernel> {
        let mut v = vec![Kernel::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                v.push(Kernel::Avx2);
            }
            if has_avx512vbmi() {
                v.push(Kernel::Avx512Vbmi);
            }
        }
        v
    }

    /// Decodes the longest prefix of `src` made of whole groups of 4 base64
    /// symbols (RFC 4648 §4 alphabet, no `=`), appending the bytes to `out`;
    /// returns how many bytes of `src` were consumed (a multiple of 4). The
    /// fused path's inner loop, public for the `base64_decode` bench.
    pub fn decode_prefix(self, src: &[u8], out: &mut Vec<u8>) -> usize {
        decode_prefix(self, src, out)
    }

    /// Short name (`scalar`, `avx2`, `avx512vbmi`).
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512Vbmi => "avx512vbmi",
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn has_avx512vbmi() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
}

/// Decodes the longest prefix of `src` made of whole groups of 4 alphabet
/// symbols, appending the bytes to `out`; returns how many bytes of `src` it
/// consumed (a multiple of 4). `out` must have at least
/// `src.len() / 4 * 3 + 64` bytes of spare capacity for the SIMD kernels to
/// avoid reallocating; the function reserves it if not.
pub(crate) fn decode_prefix(kernel: Kernel, src: &[u8], out: &mut Vec<u8>) -> usize {
    match kernel {
        Kernel::Scalar => decode_prefix_scalar(src, out),
        Kernel::Avx2 => {
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: AVX2 is present (checked just above).
                    return unsafe { avx2::decode_prefix(src, out) };
                }
            }
            decode_prefix_scalar(src, out)
        }
        Kernel::Avx512Vbmi => {
            #[cfg(target_arch = "x86_64")]
            {
                if has_avx512vbmi() {
                    // SAFETY: AVX-512 F/BW/VBMI are present (checked just above).
                    return unsafe { avx512::decode_prefix(src, out) };
                }
            }
            decode_prefix(Kernel::detect(), src, out)
        }
    }
}

/// Scalar kernel: 4 symbols → 3 bytes per step through [`DECODE_TABLE`].
fn decode_prefix_scalar(src: &[u8], out: &mut Vec<u8>) -> usize {
    let mut consumed = 0;
    for group in src.chunks_exact(4) {
        let a = DECODE_TABLE[group[0] as usize];
        let b = DECODE_TABLE[group[1] as usize];
        let c = DECODE_TABLE[group[2] as usize];
        let d = DECODE_TABLE[group[3] as usize];
        if (a | b | c | d) & 0x80 != 0 {
            break;
        }
        let v = (u32::from(a) << 18) | (u32::from(b) << 12) | (u32::from(c) << 6) | u32::from(d);
        out.extend_from_slice(&[(v >> 16) as u8, (v >> 8) as u8, v as u8]);
        consumed += 4;
    }
    consumed
}

/// The output side of a SIMD kernel: room reserved in `out` for its stores.
#[cfg(target_arch = "x86_64")]
struct SimdOut {
    /// `out.len()` on entry: where the kernel's first byte goes.
    base: usize,
    /// `out`'s buffer at `base` (spare capacity until [`SimdOut::finish`]).
    dst: *mut u8,
}

#[cfg(target_arch = "x86_64")]
impl SimdOut {
    /// Reserves `src.len() / 4 * 3 + 64` bytes past `out.len()`: a kernel at
    /// output offset `o <= i / 4 * 3` (`i` symbols read) may store 64 bytes
    /// from there, inside the allocation.
    fn reserve(src: &[u8], out: &mut Vec<u8>) -> SimdOut {
        out.reserve(src.len() / 4 * 3 + 64);
        let base = out.len();
        // SAFETY: `base <= capacity`: the pointer stays inside the allocation
        // (or one past its end).
        let dst = unsafe { out.as_mut_ptr().add(base) };
        SimdOut { base, dst }
    }

    /// Exposes the `o` bytes the kernel wrote at `dst`, decodes the rest of
    /// `src` from symbol `i` with the scalar kernel, and returns the symbols
    /// consumed in all (the kernel's `decode_prefix` result).
    ///
    /// # Safety
    /// The kernel's stores wrote all of `out[base..base + o]`, and `out` was
    /// not reallocated since [`SimdOut::reserve`].
    unsafe fn finish(self, src: &[u8], out: &mut Vec<u8>, i: usize, o: usize) -> usize {
        // SAFETY: the caller's contract; `base + o` is within the reserved room.
        unsafe { out.set_len(self.base + o) };
        i + decode_prefix_scalar(&src[i..], out)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// AVX2 kernel; see the module docs.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn decode_prefix(src: &[u8], out: &mut Vec<u8>) -> usize {
        let room = super::SimdOut::reserve(src, out);
        let lut_lo = _mm256_setr_epi8(
            0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1a, 0x1b, 0x1b,
            0x1b, 0x1a, 0x15, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x1a,
            0x1b, 0x1b, 0x1b, 0x1a,
        );
        let lut_hi = _mm256_setr_epi8(
            0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10,
            0x10, 0x10, 0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x04, 0x08, 0x10, 0x10, 0x10, 0x10,
            0x10, 0x10, 0x10, 0x10,
        );
        let lut_roll = _mm256_setr_epi8(
            0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 19, 4, -65, -65, -71,
            -71, 0, 0, 0, 0, 0, 0, 0, 0,
        );
        let mask_0f = _mm256_set1_epi8(0x0f);
        let slash = _mm256_set1_epi8(0x2f);
        let merge_ab_bc = _mm256_set1_epi32(0x0140_0140);
        let merge_abcd = _mm256_set1_epi32(0x0001_1000);
        let pack_lane = _mm256_setr_epi8(
            2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1, 2, 1, 0, 6, 5, 4, 10, 9, 8, 14,
            13, 12, -1, -1, -1, -1,
        );
        let pack_cross = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);

        let len = src.len();
        let mut i = 0usize;
        let mut o = 0usize;
        let src_ptr = src.as_ptr();
        // SAFETY (for the whole loop): `i + 32 <= len` so the load reads inside
        // `src`; `room` guarantees capacity >= room.base + len/4*3 + 64, and
        // `o <= i/4*3` with `i + 32 <= len`, so the 32-byte store at
        // `dst + o` stays inside the allocation. Bytes are only exposed by
        // `finish` below after being written.
        let dst = room.dst;
        // Translate 32 symbols to 6-bit values; `None` if any is outside the alphabet.
        let translate = |input: __m256i| -> Option<__m256i> {
            let hi_nibbles = _mm256_and_si256(_mm256_srli_epi32::<4>(input), mask_0f);
            let lo_nibbles = _mm256_and_si256(input, mask_0f);
            let lo = _mm256_shuffle_epi8(lut_lo, lo_nibbles);
            let hi = _mm256_shuffle_epi8(lut_hi, hi_nibbles);
            // Bytes >= 0x80 have hi nibble >= 8 → 0x10, and every lut_lo entry has 0x10.
            if _mm256_testz_si256(lo, hi) == 0 {
                return None;
            }
            let eq_slash = _mm256_cmpeq_epi8(input, slash);
            let roll = _mm256_shuffle_epi8(lut_roll, _mm256_add_epi8(eq_slash, hi_nibbles));
            Some(_mm256_add_epi8(input, roll))
        };
        // Pack 32 6-bit values into 24 bytes (low 24 bytes of the result).
        let pack = |values: __m256i| -> __m256i {
            let merged = _mm256_maddubs_epi16(values, merge_ab_bc);
            let words = _mm256_madd_epi16(merged, merge_abcd);
            let packed = _mm256_shuffle_epi8(words, pack_lane);
            _mm256_permutevar8x32_epi32(packed, pack_cross)
        };
        // Two blocks per step: both are checked before either is stored.
        while i + 64 <= len {
            // SAFETY: see the loop comment (`i + 64 <= len`).
            let (a, b) = unsafe {
                (
                    _mm256_loadu_si256(src_ptr.add(i).cast::<__m256i>()),
                    _mm256_loadu_si256(src_ptr.add(i + 32).cast::<__m256i>()),
                )
            };
            let (Some(va), Some(vb)) = (translate(a), translate(b)) else {
                break;
            };
            // SAFETY: see the loop comment; the second store ends at
            // `o + 56 = 3i/4 + 56 <= 3(len - 64)/4 + 56 < len/4*3 + 64` (reserved).
            unsafe {
                _mm256_storeu_si256(dst.add(o).cast::<__m256i>(), pack(va));
                _mm256_storeu_si256(dst.add(o + 24).cast::<__m256i>(), pack(vb));
            }
            i += 64;
            o += 48;
        }
        while i + 32 <= len {
            // SAFETY: see the loop comment.
            let input = unsafe { _mm256_loadu_si256(src_ptr.add(i).cast::<__m256i>()) };
            let Some(values) = translate(input) else {
                break;
            };
            // SAFETY: see the loop comment.
            unsafe { _mm256_storeu_si256(dst.add(o).cast::<__m256i>(), pack(values)) };
            i += 32;
            o += 24;
        }
        // SAFETY: the first `o` bytes at `dst` were written by the stores.
        unsafe { room.finish(src, out, i, o) }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::DECODE_TABLE;
    use std::arch::x86_64::*;

    /// Decoded value of ASCII bytes 0..128, `0x80` where not in the alphabet.
    const LOOKUP: [u8; 128] = {
        let mut t = [0x80u8; 128];
        let mut i = 0;
        while i < 128 {
            if DECODE_TABLE[i] != 0xff {
                t[i] = DECODE_TABLE[i];
            }
            i += 1;
        }
        t
    };

    /// Output byte `j` of a 64-symbol block is byte `4 * (j / 3) + 2 - j % 3`
    /// of the `madd` result (each 32-bit lane holds 24 bits, little-endian).
    const PACK: [u8; 64] = {
        let mut t = [0u8; 64];
        let mut j = 0;
        while j < 48 {
            t[j] = (4 * (j / 3) + 2 - j % 3) as u8;
            j += 1;
        }
        t
    };

    /// AVX-512 VBMI kernel; see [`super::Kernel::Avx512Vbmi`].
    ///
    /// # Safety
    /// The CPU must support AVX-512 F, BW and VBMI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(super) unsafe fn decode_prefix(src: &[u8], out: &mut Vec<u8>) -> usize {
        let room = super::SimdOut::reserve(src, out);
        // SAFETY: LOOKUP/PACK are 128/64 bytes; unaligned loads of 64 bytes.
        let (lut0, lut1, pack) = unsafe {
            (
                _mm512_loadu_si512(LOOKUP.as_ptr().cast::<__m512i>()),
                _mm512_loadu_si512(LOOKUP.as_ptr().add(64).cast::<__m512i>()),
                _mm512_loadu_si512(PACK.as_ptr().cast::<__m512i>()),
            )
        };
        let merge_ab_bc = _mm512_set1_epi32(0x0140_0140);
        let merge_abcd = _mm512_set1_epi32(0x0001_1000);
        let len = src.len();
        let mut i = 0usize;
        let mut o = 0usize;
        let src_ptr = src.as_ptr();
        // SAFETY (whole loop): `i + 64 <= len` keeps loads inside `src`;
        // capacity >= room.base + len/4*3 + 64 and `o = i/4*3`, so the 64-byte
        // store at `dst + o` stays inside the allocation; only written
        // bytes are exposed by `finish`.
        let dst = room.dst;
        while i + 64 <= len {
            // SAFETY: see the loop comment.
            let input = unsafe { _mm512_loadu_si512(src_ptr.add(i).cast::<__m512i>()) };
            let values = _mm512_permutex2var_epi8(lut0, input, lut1);
            // Bit 7 set in `values` (not in the alphabet) or in `input` (non-ASCII).
            if _mm512_movepi8_mask(_mm512_or_si512(values, input)) != 0 {
                break;
            }
            let merged = _mm512_maddubs_epi16(values, merge_ab_bc);
            let words = _mm512_madd_epi16(merged, merge_abcd);
            let packed = _mm512_permutexvar_epi8(pack, words);
            // SAFETY: see the loop comment.
            unsafe { _mm512_storeu_si512(dst.add(o).cast::<__m512i>(), packed) };
            i += 64;
            o += 48;
        }
        // SAFETY: the first `o` bytes at `dst` were written by the stores.
        unsafe { room.finish(src, out, i, o) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::base64::ALPHABET;

    fn check_all_kernels(src: &[u8]) {
        let mut want = Vec::new();
        let want_n = decode_prefix_scalar(src, &mut want);
        for k in Kernel::available() {
            let mut got = vec![0xAA];
            let n = decode_prefix(k, src, &mut got);
            assert_eq!(n, want_n, "{k:?} consumed, len {}", src.len());
            assert_eq!(&got[1..], &want[..], "{k:?} bytes, len {}", src.len());
        }
    }

    #[test]
    fn every_byte_value_at_every_position_of_a_block() {
        // 160 valid symbols (two 64-symbol blocks + tail), one byte replaced at each
        // position by each value.
        let base: Vec<u8> = (0..160).map(|i| ALPHABET[(i * 7 + 3) % 64]).collect();
        for pos in 0..160 {
            for b in 0..=255u8 {
                let mut s = base.clone();
                s[pos] = b;
                check_all_kernels(&s);
            }
        }
    }

    #[test]
    fn all_alphabet_symbols_decode_like_the_table() {
        for len in 0..=200 {
            let s: Vec<u8> = (0..len).map(|i| ALPHABET[(i * 13 + len) % 64]).collect();
            check_all_kernels(&s);
        }
    }
}
