// $batch bodies built from random pieces (boundaries, part headers, request lines, bodies, line ends, cut anywhere)
// and random JSON batches: the service answers each with a 200 batch or a clean 4xx OData error, never a 500, and a
// batch it refuses as malformed runs none of its requests.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineEntityType, defineModel } from '../../src/model/schema.js';
import { MemoryStore } from '../../src/service/memory-store.js';
import { createODataService } from '../../src/service/service.js';

const Item = defineEntityType({
  name: 'Item',
  key: ['ID'],
  properties: { ID: { type: 'Edm.Int32' }, Name: { type: 'Edm.String', maxLength: 20 } },
});
const model = defineModel({
  namespace: 'Batch',
  entitySets: { Items: { type: Item, insertable: true, updatable: true, deletable: true } },
});
const runs = Number(process.env.BATCH_RUNS ?? '300');

const eol = fc.constantFrom('\r\n', '\n', '\r', '');
const requestLine = fc.oneof(
  fc.constantFrom(
    'GET Items HTTP/1.1',
    'GET Items(1) HTTP/1.1',
    'POST Items HTTP/1.1',
    'PATCH Items(1) HTTP/1.1',
    'DELETE Items(2) HTTP/1.1',
    'GET $1 HTTP/1.1',
    'POST $1/Nope HTTP/1.1',
    'GET /Items?$top=1 HTTP/1.1',
    'GET http://test/Items HTTP/1.1',
    'POST $batch HTTP/1.1',
    'GET Items?$filter=ID%20eq%201 HTTP/1.0',
    'BREW Items HTTP/1.1',
    '',
  ),
  fc.string({ maxLength: 40 }),
);
const header = fc.oneof(
  fc.constantFrom(
    'Content-Type: application/http',
    'Content-Type: application/json',
    'Content-Type: multipart/mixed; boundary=cs',
    'Content-Type: multipart/mixed',
    'Content-ID: 1',
    'Content-ID: 2',
    'Content-Length: 5',
    'Content-Length: 99999',
    'If-Match: $1',
    'Content-Transfer-Encoding: binary',
    ' folded',
    'NoColon',
  ),
  fc.string({ maxLength: 30 }),
);
const body = fc.oneof(
  fc.constantFrom('{"ID":1,"Name":"a"}', '{"ID":2,"Name":"b"}', '{"Name":"x"}', '{', '', 'null', '{"ID":"x"}'),
  fc.string({ maxLength: 40 }),
);
const part = fc
  .tuple(fc.array(header, { maxLength: 4 }), requestLine, fc.array(header, { maxLength: 3 }), body, eol)
  .map(([mime, line, headers, content, end]) => [...mime, '', line, ...headers, '', content].join(end));
const delimiter = fc.constantFrom('--b', '--cs', '--b--', '--cs--', '--', '--bb', '');
const multipart = fc
  .array(fc.tuple(delimiter, eol, part, eol), { maxLength: 6 })
  .chain((pieces) =>
    fc
      .tuple(
        fc.constant(pieces.map(([d, e1, p, e2]) => `${d}${e1}${p}${e2}`).join('')),
        fc.constantFrom('--b--', '', '--b'),
      )
      .map(([text, close]) => `${text}${close}`),
  )
  // cut anywhere, or whole
  .chain((text) => fc.option(fc.nat({ max: text.length })).map((cut) => (cut === null ? text : text.slice(0, cut))));

const jsonRequest = fc.record(
  {
    id: fc.oneof(fc.constantFrom('1', '2', 'a', '', 'g'), fc.string({ maxLength: 4 }), fc.integer()),
    method: fc.oneof(fc.constantFrom('get', 'post', 'PATCH', 'delete', 'put', 'brew'), fc.integer()),
    url: fc.oneof(
      fc.constantFrom('Items', 'Items(1)', '$1', '$a/Nope', '/Items', '$batch', ''),
      fc.string({ maxLength: 10 }),
    ),
    headers: fc.oneof(
      fc.constant({ 'content-type': 'application/json' }),
      fc.constant({ 'if-match': '$1' }),
      fc.constant(5),
    ),
    body: fc.oneof(fc.constant({ ID: 3, Name: 'c' }), fc.constant({ Name: 7 }), fc.constant('text'), fc.constant(null)),
    atomicityGroup: fc.oneof(fc.constantFrom('g', 'h', '1'), fc.integer()),
    dependsOn: fc.oneof(fc.constant(['1']), fc.constant(['g']), fc.constant(['zz']), fc.constant('1')),
  },
  { requiredKeys: [] },
);

async function fresh(): Promise<{
  handle: (type: string, text: string) => Promise<{ status: number; body: string }>;
  rows: () => number;
}> {
  const rows = [{ ID: 1, Name: 'one' }];
  const service = createODataService({ model, store: new MemoryStore(model, { Items: rows }) });
  return {
    handle: async (type, text) => {
      const response = await service.handle({
        method: 'POST',
        url: '/$batch',
        headers: { host: 'test', 'content-type': type },
        body: Buffer.from(text, 'utf8'),
      });
      return { status: response.status, body: Buffer.from(response.body ?? '').toString('utf8') };
    },
    rows: () => rows.length,
  };
}

describe('$batch bodies from random pieces (property)', () => {
  it('answers every multipart body with a batch or a clean 4xx, and a refused one runs nothing', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        multipart,
        fc.constantFrom('multipart/mixed; boundary=b', 'multipart/mixed;boundary="b"'),
        async (text, type) => {
          const { handle, rows } = await fresh();
          const answer = await handle(type, text);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          expect([200, 400, 413, 415], answer.body).toContain(answer.status);
          if (answer.status !== 200) {
            expect(JSON.parse(answer.body).error.code).toMatch(/^[A-Z]\w+$/);
            expect(rows()).toBe(1);
          } else {
            expect(answer.body).toMatch(/--batchresponse_[\w-]+--\r\n$/);
            // no part answered 500
            expect(answer.body).not.toMatch(/^HTTP\/1\.1 5\d\d/m);
          }
        },
      ),
      { numRuns: runs },
    );
    // the pieces make both: batches that run and batches refused whole
    expect(statuses.get(200) ?? 0, JSON.stringify([...statuses])).toBeGreaterThan(runs / 20);
    expect(statuses.get(400) ?? 0, JSON.stringify([...statuses])).toBeGreaterThan(runs / 20);
  });

  it('answers every JSON batch with responses or a clean 400, never a 500', async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.array(jsonRequest, { maxLength: 6 }).map((requests) => ({ requests })),
          fc.anything(),
        ),
        async (value) => {
          const { handle, rows } = await fresh();
          const answer = await handle('application/json', JSON.stringify(value) ?? 'null');
          expect([200, 400], answer.body).toContain(answer.status);
          const parsed = JSON.parse(answer.body) as { responses?: { status: number }[]; error?: { code: string } };
          if (answer.status === 400) {
            expect(parsed.error!.code).toMatch(/^[A-Z]\w+$/);
            expect(rows()).toBe(1);
          } else for (const r of parsed.responses!) expect(r.status).toBeLessThan(500);
        },
      ),
      { numRuns: runs },
    );
  });
});
