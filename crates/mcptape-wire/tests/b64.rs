//! Base64 size arithmetic with the seeds' figures.

use mcptape_wire::b64::{
    checked_encoded_len, count_padding, decoded_len, encoded_len, padding_len,
};
use mcptape_wire::codec::base64::{Path, encode};

#[test]
fn seed_png_1834208_bytes_is_2445612_chars_one_pad() {
    assert_eq!(encoded_len(1_834_208), 2_445_612);
    assert_eq!(padding_len(1_834_208), 1);
    assert_eq!(decoded_len(2_445_612, 1), Some(1_834_208));
}

#[test]
fn seed_png_figures_match_a_real_encoding() {
    let bytes = vec![0xA5u8; 1_834_208];
    let s = encode(Path::Scalar, &bytes);
    assert_eq!(s.len(), 2_445_612);
    assert_eq!(count_padding(s.as_bytes()), 1);
    assert!(s.ends_with("=") && !s.ends_with("=="));
}

#[test]
fn seed_directory_40_mockups_of_3_mb_is_160_mb() {
    // per file: 3,000,000 bytes -> 4,000,000 chars, no padding
    assert_eq!(encoded_len(3_000_000), 4_000_000);
    assert_eq!(padding_len(3_000_000), 0);
    assert_eq!(40 * encoded_len(3_000_000), 160_000_000);
}

#[test]
fn seed_directory_120_mb_grown_by_a_third_is_160_mb() {
    assert_eq!(encoded_len(40 * 3_000_000), 160_000_000);
}

#[test]
fn small_sizes_and_padding() {
    let table = [
        (0, 0, 0),
        (1, 4, 2),
        (2, 4, 1),
        (3, 4, 0),
        (4, 8, 2),
        (5, 8, 1),
    ];
    for (n, len, pad) in table {
        assert_eq!(encoded_len(n), len, "n={n}");
        assert_eq!(padding_len(n), pad, "n={n}");
        let real = encode(Path::Scalar, &vec![0u8; n as usize]);
        assert_eq!(real.len() as u64, len);
        assert_eq!(count_padding(real.as_bytes()), usize::from(pad));
    }
}

#[test]
fn decoded_len_rejects_impossible_shapes() {
    assert_eq!(decoded_len(6, 0), None);
    assert_eq!(decoded_len(8, 3), None);
    assert_eq!(decoded_len(0, 1), None);
    assert_eq!(decoded_len(0, 0), Some(0));
}

#[test]
fn encoded_len_overflow_is_reported_not_wrapped() {
    assert_eq!(checked_encoded_len(u64::MAX), None);
    assert_eq!(encoded_len(u64::MAX), u64::MAX);
    assert_eq!(
        checked_encoded_len(u64::MAX / 4 * 3),
        Some(u64::MAX / 4 * 4)
    );
}
