// The harness's test runner for an exercise's own jest tests (node has no jest offline):
// a small jest-compatible shim (describe, test/it and their x/skip forms, before/after
// hooks, expect with the matchers Exercism's tests use). It reads the job's token and
// one JSON list `["<describe names> <test name>"]` on descriptor 3 before any other code
// runs, loads the test file (which loads the solution), runs exactly that test, and
// writes "<token> 0 true" on descriptor 4 when it passed, else "<token> 0 <what failed,
// as a JSON string>", then "<token> end". The verdict is taken in the program's
// process: sandbox/README.md, "Test runners". What the solution could reach is kept
// from it: every builtin the shim calls once the solution has loaded (array, string,
// Map and Set methods, Math, Number, JSON, Promise) is taken before it loads and called
// as taken (never looked up on a prototype the solution may have patched; arrays are
// walked by index, never by their iterator), the test file binds the shim's functions
// before it imports the solution, and the solution cannot require node's modules that
// reach into the process (fs, inspector, vm, v8, worker_threads, child_process). The
// verdict is still taken in the process; the harness grades hidden tests against twins
// (harness/kinds/runner_twins.py).
'use strict';
const fs = require('fs');
const Module = require('module');
const writeSync = fs.writeSync;
const { keys: objectKeys, getPrototypeOf, is: sameValue, prototype: objectPrototype } = Object;
const hasOwn = Function.prototype.call.bind(objectPrototype.hasOwnProperty);
const isArray = Array.isArray;
const stringify = JSON.stringify;
const toText = String;
const uncurry = (f) => Function.prototype.call.bind(f);
const arrayPush = uncurry(Array.prototype.push), arrayPop = uncurry(Array.prototype.pop);
const arrayJoin = uncurry(Array.prototype.join), arraySlice = uncurry(Array.prototype.slice);
const arrayFilter = uncurry(Array.prototype.filter), arraySome = uncurry(Array.prototype.some);
const arrayFrom = Array.from;
const textSplit = uncurry(String.prototype.split), textIncludes = uncurry(String.prototype.includes);
const textStartsWith = uncurry(String.prototype.startsWith);
const regexTest = uncurry(RegExp.prototype.test);
const mapHas = uncurry(Map.prototype.has), mapGet = uncurry(Map.prototype.get), mapEntries = uncurry(Map.prototype.entries);
const setHas = uncurry(Set.prototype.has), setValues = uncurry(Set.prototype.values);
const mapSize = uncurry(Object.getOwnPropertyDescriptor(Map.prototype, 'size').get);
const setSize = uncurry(Object.getOwnPropertyDescriptor(Set.prototype, 'size').get);
const dateTime = uncurry(Date.prototype.getTime);
const mathAbs = Math.abs, isNaNumber = Number.isNaN;
const PromiseOf = Promise;
const reflectApply = Reflect.apply;
const textReplace = uncurry(String.prototype.replace);
const errorWrite = process.stderr.write.bind(process.stderr);
// An array's items, walked by index (never by the array's iterator, which code can patch).
function items(list) {
  const out = [];
  for (let i = 0; i < list.length; i += 1) arrayPush(out, list[i]);
  return out;
}
function concat(...lists) {
  const out = [];
  for (let i = 0; i < lists.length; i += 1) for (let j = 0; j < lists[i].length; j += 1) arrayPush(out, lists[i][j]);
  return out;
}

let input = '';
try { input = fs.readFileSync(3, 'utf8'); } catch (error) {}
const inputLines = textSplit(input, '\n');
const token = inputLines[0];
const line = inputLines.length > 1 ? inputLines[1] : '';
let wanted = null;
try { const parsed = JSON.parse(line); if (isArray(parsed) && parsed.length === 1) wanted = toText(parsed[0]); } catch (error) {}

const refused = new Set(__REFUSED__);  // sandbox/toolchains/javascript.py, REFUSED_MODULES
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const name = textReplace(toText(request), /^node:/, '');
  if (setHas(refused, name)) throw new Error(`the test runner does not let a solution require '${toText(request)}'`);
  return reflectApply(load, this, [request, parent, isMain]);
};
process.binding = process._linkedBinding = () => { throw new Error('process.binding is not available'); };

// --- equality and display, as jest's toEqual (recursive, ignoring undefined properties)
function show(value) {
  if (typeof value === 'string') return stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return `[Function ${value.name || 'anonymous'}]`;
  if (value instanceof Error) return `[${value.name}: ${value.message}]`;
  if (value instanceof Map) return `Map ${show(arrayFrom(mapEntries(value)))}`;
  if (value instanceof Set) return `Set ${show(arrayFrom(setValues(value)))}`;
  try {
    const text = stringify(value, (k, v) => (typeof v === 'bigint' ? `${v}n` : v === undefined ? '<undefined>' : v));
    return text === undefined ? toText(value) : text;
  } catch (error) { return toText(value); }
}

function equals(a, b, strict) {
  if (sameValue(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Date && b instanceof Date) return dateTime(a) === dateTime(b);
  if (a instanceof RegExp && b instanceof RegExp) return toText(a) === toText(b);
  if (isArray(a) !== isArray(b)) return false;
  if (strict && getPrototypeOf(a) !== getPrototypeOf(b)) return false;
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || mapSize(a) !== mapSize(b)) return false;
    const entries = arrayFrom(mapEntries(a));
    for (let i = 0; i < entries.length; i += 1) {
      const k = entries[i][0], v = entries[i][1];
      if (!mapHas(b, k) || !equals(v, mapGet(b, k), strict)) return false;
    }
    return true;
  }
  if (a instanceof Set || b instanceof Set) {
    if (!(a instanceof Set && b instanceof Set) || setSize(a) !== setSize(b)) return false;
    const values = arrayFrom(setValues(a)), others = arrayFrom(setValues(b));
    for (let i = 0; i < values.length; i += 1) {
      const v = values[i];
      if (!setHas(b, v) && !arraySome(others, (w) => equals(v, w, strict))) return false;
    }
    return true;
  }
  if (isArray(a) && a.length !== b.length) return false;
  const wanted = (o) => arrayFilter(objectKeys(o), (k) => strict || o[k] !== undefined);
  const ka = wanted(a), kb = wanted(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i += 1) { const k = ka[i]; if (!hasOwn(b, k) || !equals(a[k], b[k], strict)) return false; }
  return true;
}

class Failure extends Error {}

function thrown(fn) {
  try { fn(); } catch (error) { return { error }; }
  return null;
}

function matchesError(error, expected) {
  if (expected === undefined) return true;
  const message = error && error.message !== undefined ? toText(error.message) : toText(error);
  if (typeof expected === 'string') return textIncludes(message, expected);
  if (expected instanceof RegExp) return regexTest(expected, message);
  if (typeof expected === 'function') return error instanceof expected;
  if (expected instanceof Error) return message === expected.message;
  return false;
}

function matchers(actual, negated, label) {
  const check = (pass, what) => {
    if (pass === negated) throw new Failure(`expect(${show(actual)})${negated ? '.not' : ''}.${what}`);
  };
  const m = {
    toEqual: (e) => check(equals(actual, e, false), `toEqual(${show(e)})`),
    toStrictEqual: (e) => check(equals(actual, e, true), `toStrictEqual(${show(e)})`),
    toBe: (e) => check(sameValue(actual, e), `toBe(${show(e)})`),
    toBeCloseTo: (e, digits = 2) => check(mathAbs(e - actual) < 10 ** -digits / 2, `toBeCloseTo(${show(e)}, ${digits})`),
    toBeTruthy: () => check(!!actual, 'toBeTruthy()'),
    toBeFalsy: () => check(!actual, 'toBeFalsy()'),
    toBeNull: () => check(actual === null, 'toBeNull()'),
    toBeUndefined: () => check(actual === undefined, 'toBeUndefined()'),
    toBeDefined: () => check(actual !== undefined, 'toBeDefined()'),
    toBeNaN: () => check(isNaNumber(actual), 'toBeNaN()'),
    toBeInstanceOf: (e) => check(actual instanceof e, `toBeInstanceOf(${e && e.name})`),
    toBeGreaterThan: (e) => check(actual > e, `toBeGreaterThan(${show(e)})`),
    toBeGreaterThanOrEqual: (e) => check(actual >= e, `toBeGreaterThanOrEqual(${show(e)})`),
    toBeLessThan: (e) => check(actual < e, `toBeLessThan(${show(e)})`),
    toBeLessThanOrEqual: (e) => check(actual <= e, `toBeLessThanOrEqual(${show(e)})`),
    toContain: (e) => check(actual != null && (typeof actual === 'string' ? textIncludes(actual, e) : arraySome(arrayFrom(actual), (x) => sameValue(x, e))), `toContain(${show(e)})`),
    toContainEqual: (e) => check(actual != null && arraySome(arrayFrom(actual), (x) => equals(x, e, false)), `toContainEqual(${show(e)})`),
    toHaveLength: (e) => check(actual != null && actual.length === e, `toHaveLength(${show(e)})`),
    toHaveProperty: (p) => check(actual != null && hasOwn(actual, p), `toHaveProperty(${show(p)})`),
    toMatch: (e) => check(typeof actual === 'string' && (e instanceof RegExp ? regexTest(e, actual) : textIncludes(actual, e)), `toMatch(${show(toText(e))})`),
    toThrow: (e) => {
      if (typeof actual !== 'function') throw new Failure('expect(...).toThrow() needs a function');
      const got = thrown(actual);
      check(got !== null && matchesError(got.error, e), `toThrow(${e === undefined ? '' : show(e instanceof RegExp ? toText(e) : e)})` + (got ? ` (threw ${show(got.error)})` : ' (nothing was thrown)'));
    },
  };
  m.toThrowError = m.toThrow;
  return m;
}

function promised(actual, rejects, negated) {
  const out = {};
  const names = objectKeys(matchers(undefined, false));
  for (let i = 0; i < names.length; i += 1) {
    const name = names[i];
    out[name] = async (...args) => {
      let value, failed = false;
      try { value = await actual; } catch (error) { value = error; failed = true; }
      if (failed !== rejects) throw new Failure(`the promise ${rejects ? 'resolved' : 'rejected'}: ${show(value)}`);
      if (rejects && textStartsWith(name, 'toThrow')) return reflectApply(matchers(() => { throw value; }, negated)[name], undefined, args);
      return reflectApply(matchers(value, negated)[name], undefined, args);
    };
  }
  return out;
}

function expect(actual) {
  const m = matchers(actual, false);
  m.not = matchers(actual, true);
  m.resolves = promised(actual, false, false);
  m.rejects = promised(actual, true, false);
  m.resolves.not = promised(actual, false, true);
  m.rejects.not = promised(actual, true, true);
  return m;
}

// --- collection
const tests = [];
const path = [];
let hooks = { beforeEach: [], afterEach: [], beforeAll: [], afterAll: [] };

function describe(name, body) {
  const saved = hooks;
  hooks = { beforeEach: items(saved.beforeEach), afterEach: items(saved.afterEach), beforeAll: items(saved.beforeAll), afterAll: items(saved.afterAll) };
  arrayPush(path, toText(name));
  try { body(); } finally { arrayPop(path); hooks = saved; }
}
function test(name, body) {
  arrayPush(tests, { name: arrayJoin(concat(path, [toText(name)]), ' '), body, hooks });
}
describe.skip = describe; describe.only = describe; test.skip = test; test.only = test;
const jestGlobals = {
  describe, xdescribe: describe, fdescribe: describe,
  test, it: test, xtest: test, xit: test, fit: test,
  expect,
  beforeEach: (f) => arrayPush(hooks.beforeEach, f), afterEach: (f) => arrayPush(hooks.afterEach, f),
  beforeAll: (f) => arrayPush(hooks.beforeAll, f), afterAll: (f) => arrayPush(hooks.afterAll, f),
  jest: { fn: (impl = () => undefined) => { const f = (...a) => { arrayPush(f.mock.calls, a); return reflectApply(impl, undefined, a); }; f.mock = { calls: [] }; return f; } },
};
globalThis.__harnessJest = jestGlobals;

async function call(body) {
  if (body.length > 0) return new PromiseOf((resolve, reject) => body((error) => (error ? reject(error) : resolve())));
  return body();
}

async function main() {
  let result;
  try {
    require('./__SPEC__');
    const chosen = arrayFilter(tests, (t) => t.name === wanted);
    if (chosen.length !== 1) {
      result = stringify(`no test named ${stringify(wanted)} in the test file` + (chosen.length > 1 ? ' (the name is not unique)' : ''));
    } else {
      const { body, hooks: h } = chosen[0];
      const before = concat(h.beforeAll, h.beforeEach), after = concat(h.afterEach, h.afterAll);
      for (let i = 0; i < before.length; i += 1) await call(before[i]);
      await call(body);
      for (let i = 0; i < after.length; i += 1) await call(after[i]);
      result = 'true';
    }
  } catch (error) {
    const message = error instanceof Failure ? error.message
      : `${error && error.name ? error.name : 'Error'}: ${error && error.message !== undefined ? error.message : toText(error)}`
        + (error && error.stack ? '\n' + arrayJoin(arraySlice(textSplit(toText(error.stack), '\n'), 1, 4), '\n') : '');
    try { errorWrite(message + '\n'); } catch (ignored) {}
    result = stringify(message);
  }
  writeSync(4, `${token} 0 ${result}\n${token} end\n`);
}
main();
