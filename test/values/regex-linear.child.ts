// Run by regex-linear.test.ts in a child process with a time limit (so a backtracking engine cannot hang the suite):
// the filter of issue 12, matchesPattern(Description,'.*.*.*.*.*.*.*.*%00'), over 40 rows of 10,000 characters.
// `node --import tsx regex-linear.child.ts ours|regexp` prints {"engine","rows","matched","ms"} as JSON.
import { compileMatcher, parsePattern } from '../../src/values/regex.js';

const engine = process.argv[2];
const pattern = `${'.*'.repeat(8)}\u0000`;
const rows = Array.from(
  { length: 40 },
  (_, i) => `${'Valve DN50 replaced, pump checked. '.repeat(300).slice(0, 9_999)}${i}`,
);

const started = performance.now();
let test: (s: string) => boolean;
if (engine === 'regexp') {
  const re = new RegExp(pattern, 'u');
  test = (s) => re.test(s);
} else {
  const parsed = parsePattern(pattern);
  if (!parsed.ok) throw new Error(parsed.message);
  test = compileMatcher(parsed.pattern).test;
}
const matched = rows.filter((row) => test(row)).length;
console.log(JSON.stringify({ engine, rows: rows.length, matched, ms: Math.round(performance.now() - started) }));
