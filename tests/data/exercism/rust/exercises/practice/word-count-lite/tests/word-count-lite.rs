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
