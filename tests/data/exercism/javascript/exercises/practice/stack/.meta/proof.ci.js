export class Stack {
  constructor() {
    this.items = [];
  }

  push(value) {
    this.items.push(value);
  }

  pop() {
    if (this.items.length === 0) throw new Error('empty stack');
    return this.items.pop();
  }

  get size() {
    return this.items.length;
  }
}
