// The harness's test runner for an exercise's own jest tests (node has no jest offline):
// a small jest-compatible shim (describe, test/it and their x/skip forms, before/after
// hooks, expect with the matchers Exercism's tests use). It reads the job's token and
// one JSON list `["<describe names> <test name>"]` on descriptor 3 before any other code
// runs, loads the test file (which loads the solution), runs exactly that test, and
// writes "<token> 0 true" on descriptor 4 when it passed, else "<token> 0 <what failed,
// as a JSON string>", then "<token> end". The verdict is taken in the program's
// process: sandbox/README.md, "Test runners". What the solution could reach is kept
// from it where that is cheap: the builtins the matchers use are taken before it loads,
// the test file binds the shim's functions before it imports the solution, and the
// solution cannot require node's modules that reach into the process (fs, inspector,
// vm, v8, worker_threads, child_process).
'use strict';
const fs = require('fs');
const Module = require('module');
const writeSync = fs.writeSync;
const { keys: objectKeys, getPrototypeOf, is: sameValue, prototype: objectPrototype } = Object;
const hasOwn = Function.prototype.call.bind(objectPrototype.hasOwnProperty);
const isArray = Array.isArray;
const stringify = JSON.stringify;
const toText = String;

let input = '';
try { input = fs.readFileSync(3, 'utf8'); } catch (error) {}
const [token, line = ''] = input.split('\n');
let wanted = null;
try { const parsed = JSON.parse(line); if (isArray(parsed) && parsed.length === 1) wanted = toText(parsed[0]); } catch (error) {}

const refused = new Set(__REFUSED__);  // sandbox/toolchains/javascript.py, REFUSED_MODULES
const load = Module._load;
Module._load = function (request, parent, isMain) {
  const name = toText(request).replace(/^node:/, '');
  if (refused.has(name)) throw new Error(`the test runner does not let a solution require '${request}'`);
  return load.call(this, request, parent, isMain);
};
process.binding = process._linkedBinding = () => { throw new Error('process.binding is not available'); };

// --- equality and display, as jest's toEqual (recursive, ignoring undefined properties)
function show(value) {
  if (typeof value === 'string') return stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function') return `[Function ${value.name || 'anonymous'}]`;
  if (value instanceof Error) return `[${value.name}: ${value.message}]`;
  if (value instanceof Map) return `Map ${show(Array.from(value.entries()))}`;
  if (value instanceof Set) return `Set ${show(Array.from(value))}`;
  try {
    const text = stringify(value, (k, v) => (typeof v === 'bigint' ? `${v}n` : v === undefined ? '<undefined>' : v));
    return text === undefined ? toText(value) : text;
  } catch (error) { return toText(value); }
}

function equals(a, b, strict) {
  if (sameValue(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof RegExp && b instanceof RegExp) return toText(a) === toText(b);
  if (isArray(a) !== isArray(b)) return false;
  if (strict && getPrototypeOf(a) !== getPrototypeOf(b)) return false;
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) { if (!b.has(k) || !equals(v, b.get(k), strict)) return false; }
    return true;
  }
  if (a instanceof Set || b instanceof Set) {
    if (!(a instanceof Set && b instanceof Set) || a.size !== b.size) return false;
    for (const v of a) { if (!b.has(v) && !Array.from(b).some((w) => equals(v, w, strict))) return false; }
    return true;
  }
  if (isArray(a) && a.length !== b.length) return false;
  const wanted = (o) => objectKeys(o).filter((k) => strict || o[k] !== undefined);
  const ka = wanted(a), kb = wanted(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) { if (!hasOwn(b, k) || !equals(a[k], b[k], strict)) return false; }
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
  if (typeof expected === 'string') return message.includes(expected);
  if (expected instanceof RegExp) return expected.test(message);
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
    toBeCloseTo: (e, digits = 2) => check(Math.abs(e - actual) < 10 ** -digits / 2, `toBeCloseTo(${show(e)}, ${digits})`),
    toBeTruthy: () => check(!!actual, 'toBeTruthy()'),
    toBeFalsy: () => check(!actual, 'toBeFalsy()'),
    toBeNull: () => check(actual === null, 'toBeNull()'),
    toBeUndefined: () => check(actual === undefined, 'toBeUndefined()'),
    toBeDefined: () => check(actual !== undefined, 'toBeDefined()'),
    toBeNaN: () => check(Number.isNaN(actual), 'toBeNaN()'),
    toBeInstanceOf: (e) => check(actual instanceof e, `toBeInstanceOf(${e && e.name})`),
    toBeGreaterThan: (e) => check(actual > e, `toBeGreaterThan(${show(e)})`),
    toBeGreaterThanOrEqual: (e) => check(actual >= e, `toBeGreaterThanOrEqual(${show(e)})`),
    toBeLessThan: (e) => check(actual < e, `toBeLessThan(${show(e)})`),
    toBeLessThanOrEqual: (e) => check(actual <= e, `toBeLessThanOrEqual(${show(e)})`),
    toContain: (e) => check(actual != null && (typeof actual === 'string' ? actual.includes(e) : Array.from(actual).some((x) => sameValue(x, e))), `toContain(${show(e)})`),
    toContainEqual: (e) => check(actual != null && Array.from(actual).some((x) => equals(x, e, false)), `toContainEqual(${show(e)})`),
    toHaveLength: (e) => check(actual != null && actual.length === e, `toHaveLength(${show(e)})`),
    toHaveProperty: (p) => check(actual != null && hasOwn(actual, p), `toHaveProperty(${show(p)})`),
    toMatch: (e) => check(typeof actual === 'string' && (e instanceof RegExp ? e.test(actual) : actual.includes(e)), `toMatch(${show(toText(e))})`),
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
  for (const name of objectKeys(matchers(undefined, false))) {
    out[name] = async (...args) => {
      let value, failed = false;
      try { value = await actual; } catch (error) { value = error; failed = true; }
      if (failed !== rejects) throw new Failure(`the promise ${rejects ? 'resolved' : 'rejected'}: ${show(value)}`);
      if (rejects && name.startsWith('toThrow')) return matchers(() => { throw value; }, negated)[name](...args);
      return matchers(value, negated)[name](...args);
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
  hooks = { beforeEach: [...saved.beforeEach], afterEach: [...saved.afterEach], beforeAll: [...saved.beforeAll], afterAll: [...saved.afterAll] };
  path.push(toText(name));
  try { body(); } finally { path.pop(); hooks = saved; }
}
function test(name, body) {
  tests.push({ name: [...path, toText(name)].join(' '), body, hooks });
}
for (const f of [describe, test]) { f.skip = f; f.only = f; }
const jestGlobals = {
  describe, xdescribe: describe, fdescribe: describe,
  test, it: test, xtest: test, xit: test, fit: test,
  expect,
  beforeEach: (f) => hooks.beforeEach.push(f), afterEach: (f) => hooks.afterEach.push(f),
  beforeAll: (f) => hooks.beforeAll.push(f), afterAll: (f) => hooks.afterAll.push(f),
  jest: { fn: (impl = () => undefined) => { const f = (...a) => { f.mock.calls.push(a); return impl(...a); }; f.mock = { calls: [] }; return f; } },
};
globalThis.__harnessJest = jestGlobals;

async function call(body) {
  if (body.length > 0) return new Promise((resolve, reject) => body((error) => (error ? reject(error) : resolve())));
  return body();
}

async function main() {
  let result;
  try {
    require('./__SPEC__');
    const chosen = tests.filter((t) => t.name === wanted);
    if (chosen.length !== 1) {
      result = stringify(`no test named ${stringify(wanted)} in the test file` + (chosen.length > 1 ? ' (the name is not unique)' : ''));
    } else {
      const { body, hooks: h } = chosen[0];
      for (const f of [...h.beforeAll, ...h.beforeEach]) await call(f);
      await call(body);
      for (const f of [...h.afterEach, ...h.afterAll]) await call(f);
      result = 'true';
    }
  } catch (error) {
    const message = error instanceof Failure ? error.message
      : `${error && error.name ? error.name : 'Error'}: ${error && error.message !== undefined ? error.message : toText(error)}`
        + (error && error.stack ? '\n' + toText(error.stack).split('\n').slice(1, 4).join('\n') : '');
    process.stderr.write(message + '\n');
    result = stringify(message);
  }
  writeSync(4, `${token} 0 ${result}\n${token} end\n`);
}
main();
