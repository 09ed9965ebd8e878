// The matcher's time is linear in the value's length whatever the pattern: shown by counting its steps (instructions
// visited plus characters read), which cannot flake, and by running issue 12's filter in a child process with a time
// limit, beside JavaScript's RegExp on the same rows (which does not finish).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileMatcher, MAX_PROGRAM_SIZE, parsePattern, type Pattern } from '../../src/values/regex.js';

function parsed(text: string): Pattern {
  const result = parsePattern(text);
  if (!result.ok) throw new Error(result.message);
  return result.pattern;
}

/** Patterns that backtrack catastrophically in JavaScript, each with a string of n characters that makes them. */
const catastrophic: readonly [string, (n: number) => string][] = [
  [`${'.*'.repeat(8)}\u0000`, (n) => 'x'.repeat(n)], // issue 12: O(n^8)
  ['(a+)+$', (n) => `${'a'.repeat(n - 1)}!`], // exponential
  ['(a|a)*b', (n) => 'a'.repeat(n)],
  ['(?:a*)*b', (n) => 'a'.repeat(n)],
  ['^(\\w+\\s?)*$', (n) => `${'word '.repeat(n / 5 - 1)}word!`],
  ['(x+x+)+y', (n) => 'x'.repeat(n)],
  ['(.*a){12}b', (n) => 'a'.repeat(n)],
  ['^(\\d+)*\\.\\d{0,40}$', (n) => `${'1'.repeat(n - 1)}x`],
];

describe('linear time', () => {
  for (const dfa of [false, true]) {
    it.each(catastrophic)(
      `${dfa ? 'with' : 'without'} the DFA cache, %j takes at most (n + 1) × (program size + 2) steps, growing linearly`,
      (text, input) => {
        const pattern = parsed(text);
        const steps = (n: number): number => {
          const { matched, steps } = compileMatcher(pattern, { dfa }).measure(input(n));
          expect(matched).toBe(false);
          return steps;
        };
        const small = steps(1_000);
        const large = steps(10_000);
        expect(small).toBeLessThanOrEqual(1_001 * (pattern.size + 3));
        expect(large).toBeLessThanOrEqual(10_001 * (pattern.size + 3));
        // ten times the text, at most about ten times the work (RegExp: 10^8 times for the first pattern)
        expect(large).toBeLessThanOrEqual(11 * small);
      },
    );
  }

  it('the largest pattern accepted stays within its bound on a long value', () => {
    const pattern = parsed('(?:x|.){0,999}y'); // 999 × (4 + 1) + 1 instructions
    expect(pattern.size).toBeGreaterThan(MAX_PROGRAM_SIZE - 10);
    const { matched, steps } = compileMatcher(pattern, { dfa: false }).measure('x'.repeat(20_000));
    expect(matched).toBe(false);
    expect(steps).toBeLessThanOrEqual(20_001 * (pattern.size + 3));
  });

  const child = fileURLToPath(new URL('./regex-linear.child.ts', import.meta.url));
  const run = (engine: 'ours' | 'regexp', timeout: number) =>
    spawnSync(process.execPath, ['--import', 'tsx', child, engine], { encoding: 'utf8', timeout });

  it("issue 12's filter over 40 rows of 10,000 characters finishes (child process, 60 s limit)", () => {
    const result = run('ours', 60_000);
    expect(result.error).toBeUndefined();
    const report = JSON.parse(result.stdout) as { matched: number; ms: number };
    expect(report.matched).toBe(0);
    console.log(`issue 12's filter, 40 rows × 10,000 characters, linear matcher: ${report.ms} ms`);
  });

  it('JavaScript’s RegExp does not finish the same filter in 3 s (child process, killed)', () => {
    const result = run('regexp', 3_000);
    expect(result.signal).toBe('SIGTERM');
    expect(result.stdout).toBe('');
  });
});
