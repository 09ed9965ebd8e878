// The error catalog in src/errors.ts and docs/errors.md list the same codes with the same statuses.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { errorCatalog, ODataError, toODataErrorBody } from '../src/index.js';

const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
const documented = new Map(
  [...doc.matchAll(/^\| `(\w+)` \| (\d{3}) \|/gm)].map((match) => [match[1]!, Number(match[2])] as const),
);

describe('error catalog', () => {
  it('documents every code with its status', () => {
    for (const [code, entry] of Object.entries(errorCatalog))
      expect([code, documented.get(code)]).toEqual([code, entry.status]);
  });

  it('documents no code the catalog does not have', () => {
    expect([...documented.keys()].filter((code) => !(code in errorCatalog))).toEqual([]);
  });

  it('gives each error its catalog status and a body without internals', () => {
    const error = new ODataError('LimitExceeded', 'too deep', { target: '$filter', position: 3 });
    expect(error.status).toBe(400);
    expect(toODataErrorBody(error)).toEqual({
      error: { code: 'LimitExceeded', message: 'too deep', target: '$filter' },
    });
  });
});
