//! Tests for word-count-lite
#![allow(clippy::bool_assert_comparison)]
use word_count_lite::*;

#[test]
fn empty_sentence() {
    assert_eq!(distinct_words(""), 0);
}

#[test]
#[ignore]
fn repeated_word_counts_once() {
    assert_eq!(distinct_words("go Go GO"), 1);
}

#[test]
#[ignore]
fn punctuation_separates_words() {
    assert_eq!(distinct_words("one,two;three"), 3);
}

mod edge {
    use super::*;

    #[test]
    #[ignore]
    fn only_separators() {
        assert_eq!(distinct_words(" ,; "), 0);
    }
}

#[test]
#[ignore]
#[cfg(feature = "unicode")]
fn accented_letters_are_letters() {
    assert_eq!(distinct_words("café cafe"), 2);
}
