/// A word as it is counted: ASCII letters in lower case.
pub fn normalise(word: &str) -> String {
    word.to_ascii_lowercase()
}
