// Decimal arithmetic compared with literals: decided in doubles only when rounding cannot matter,
// so results at the boundary are exact (0.1 add 0.2 eq 0.3) however the values arrive.
import { describe, expect, it } from 'vitest';
import { compileQuery } from '../../../src/backends/memory/index.js';
import { defineEntityType, parseQuery, validateQuery } from '../../../src/index.js';

const Pair = defineEntityType({
  name: 'Pair',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    A: { type: 'Edm.Decimal' },
    B: { type: 'Edm.Decimal' },
    N: { type: 'Edm.Int32' },
  },
});

const matches = (filter: string, row: Record<string, unknown>): boolean =>
  compileQuery(validateQuery(parseQuery(`$filter=${encodeURIComponent(filter)}`), Pair)).matches({ Id: 1, ...row });

describe('decimal arithmetic against literals', () => {
  it.each([
    ['A add B eq 0.3', { A: 0.1, B: 0.2 }, true],
    ['A add B gt 0.3', { A: 0.1, B: 0.2 }, false],
    ['A add B ge 0.3', { A: 0.1, B: 0.2 }, true],
    ['A add B ne 0.3', { A: '0.1', B: '0.2' }, false],
    ['A sub B eq 0.1', { A: 0.3, B: 0.2 }, true],
    ['A mul B eq 0.02', { A: 0.1, B: 0.2 }, true],
    ['A mul B lt 0.02', { A: 0.1, B: 0.2 }, false],
    ['A mul 3 eq 0.3', { A: 0.1 }, true],
    ['A mul 3 gt 0.3', { A: 0.1 }, false],
    ['A mul B gt 1000', { A: 12.5, B: 80.01 }, true],
    ['A mul B gt 1000', { A: 12.5, B: 80 }, false],
    ['A mul B ge 1000', { A: 12.5, B: 80 }, true],
    ['A add B eq 1e16', { A: 9999999999999999, B: 1 }, true],
    ['A add B gt 0', { A: null, B: 1 }, false],
    ['A add B eq null', { A: null, B: 1 }, true],
    ['A mul B eq 0.0000000000000000001', { A: '0.0000000001', B: '0.000000001' }, true],
  ] as const)('%s with %j is %s', (filter, row, expected) => {
    expect(matches(filter, row)).toBe(expected);
  });
});
