// The harness's driver (appended after the program): reads the job's token and one JSON
// argument list a line on descriptor 3, calls the function under test once per line
// (awaiting a promise it returns), and writes "<token> <index> <result>" on descriptor 4
// in the canonical form (sandbox/worker/values.py), then "<token> end". It holds no
// expected value.
;(async (__harnessFunction) => {
  const fs = require('fs');
  const canon = (v) => {
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'number') {
      if (Number.isNaN(v)) return 'NaN';
      if (v === Infinity) return 'Infinity';
      if (v === -Infinity) return '-Infinity';
      // Every digit of an integral Number (String(v) writes 1e+21 from 1e21 on), and -0
      // as a float: the text reads back as exactly this value.
      if (Object.is(v, -0)) return '-0.0';
      if (Number.isInteger(v)) return BigInt(v).toString();
      return String(v);
    }
    if (typeof v === 'string') return JSON.stringify(v);
    if (Array.isArray(v) || ArrayBuffer.isView(v)) return '[' + Array.from(v, canon).join(',') + ']';
    if (v instanceof Set) return '[' + Array.from(v, canon).sort().join(',') + ']';
    const pairs = (v instanceof Map ? Array.from(v.entries()) : Object.entries(v)).map(([k, x]) => {
      const key = typeof k === 'string' ? k : canon(k);
      return [JSON.stringify(key), canon(x)];
    });
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return '{' + pairs.map(([k, x]) => k + ':' + x).join(',') + '}';
  };
  let data = '';
  try { data = fs.readFileSync(3, 'utf8'); } catch (error) {}
  const lines = data.split('\n');
  const token = lines[0];
  const calls = lines.slice(1).filter((line) => line.length > 0);
  for (let index = 0; index < calls.length; index++) {
    let args;
    try { args = JSON.parse(calls[index]); } catch (error) { args = null; }
    if (!Array.isArray(args)) {
      process.stderr.write(`harness driver: call ${index + 1} is not a list of arguments\n`);
      process.exit(3);
    }
    let result = __harnessFunction(...args);
    if (result && typeof result.then === 'function') result = await result;
    fs.writeSync(4, `${token} ${index} ${canon(result)}\n`);
  }
  fs.writeSync(4, `${token} end\n`);
})(__ENTRY__);
