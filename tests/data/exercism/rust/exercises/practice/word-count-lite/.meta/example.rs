mod words;

use std::collections::HashSet;

pub fn distinct_words(sentence: &str) -> usize {
    sentence
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .map(words::normalise)
        .collect::<HashSet<_>>()
        .len()
}
