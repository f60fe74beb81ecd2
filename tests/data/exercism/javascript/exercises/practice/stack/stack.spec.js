import { Stack } from './stack';

describe('Stack', () => {
  let stack;
  beforeEach(() => {
    stack = new Stack();
  });

  test('pops what was pushed last', () => {
    stack.push(1);
    stack.push([2, 3]);
    expect(stack.pop()).toEqual([2, 3]);
    expect(stack.size).toBe(1);
  });

  xtest('popping an empty stack throws', () => {
    expect(() => stack.pop()).toThrow(new Error('empty stack'));
  });

  xtest('its size cannot be set', () => {
    stack.push(1);
    expect(() => {
      stack.size = 5;
    }).toThrow(TypeError);
    expect(stack.size).toBe(1);
  });

  xtest('is empty at first', () => {
    expect(stack.size).not.toBe(1);
    expect(stack.size).toBeCloseTo(0, 5);
  });
});
