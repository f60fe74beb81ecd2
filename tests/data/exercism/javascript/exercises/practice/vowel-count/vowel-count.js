//
// This is only a SKELETON file for the 'Vowel Count' exercise.
//

export const countVowels = () => {
  throw new Error('Remove this statement and implement this function');
};
