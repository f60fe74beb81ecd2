export class Stack {
  push() {
    throw new Error('Remove this statement and implement this function');
  }

  pop() {
    throw new Error('Remove this statement and implement this function');
  }

  get size() {
    throw new Error('Remove this statement and implement this function');
  }
}
