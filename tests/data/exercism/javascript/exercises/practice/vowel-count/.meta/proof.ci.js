export const countVowels = (text) => (text.match(/[aeiou]/gi) || []).length;
