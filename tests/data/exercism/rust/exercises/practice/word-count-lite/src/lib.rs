mod words;

pub fn distinct_words(sentence: &str) -> usize {
    todo!("count the distinct words of {sentence:?}")
}
