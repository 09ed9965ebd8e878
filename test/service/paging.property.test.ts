// Keyset paging under writes, on every store: while random inserts, deletes and updates interleave with the pages,
// following @odata.nextLink from the first page to the last returns every row that existed throughout exactly once,
// never a row twice, and the rows in the query's order. With $skip paging, a delete before the cursor skips a row
// and an insert before it repeats one; the $skiptoken carries the last row's order values instead.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { defineEntityType, defineModel, type Row } from '../../src/model/schema.js';
import { createODataService, type ServiceResponse } from '../../src/service/service.js';
import { storeFactories, type OpenStore } from './stores.js';

const Item = defineEntityType({
  name: 'Item',
  key: ['ID'],
  properties: {
    ID: { type: 'Edm.Int32' },
    Grp: { type: 'Edm.String', maxLength: 10 },
    Score: { type: 'Edm.Decimal', precision: 9, scale: 2 },
    At: { type: 'Edm.DateTimeOffset' },
    Note: { type: 'Edm.String', maxLength: 40 },
  },
});
const model = defineModel({
  namespace: 'Paging',
  entitySets: { Items: { type: Item, insertable: true, updatable: true, deletable: true } },
});

// (the updates change Note only: no order here reads it, so no row moves in the order while paging)
const ORDERS = ['', 'Grp,Score desc', 'At desc', 'Score', 'Grp desc,At', 'Grp,ID desc'] as const;
const runs = Number(process.env.PAGING_RUNS ?? '25');

const row = (id: number): fc.Arbitrary<Row> =>
  fc.record({
    ID: fc.constant(id),
    Grp: fc.option(fc.constantFrom('a', 'b', 'c'), { nil: null }),
    Score: fc.option(
      fc.integer({ min: -500, max: 500 }).map((n) => (n / 4).toFixed(2)),
      { nil: null },
    ),
    At: fc.option(
      fc.integer({ min: 0, max: 20 }).map((n) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString()),
      { nil: null },
    ),
    Note: fc.constantFrom('x', 'y'),
  });

type Write =
  { kind: 'insert'; row: Row } | { kind: 'delete'; pick: number } | { kind: 'update'; pick: number; note: string };

const scenario = fc.record({
  initial: fc.integer({ min: 0, max: 40 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => row(i + 1)))),
  order: fc.constantFrom(...ORDERS),
  pageSize: fc.integer({ min: 1, max: 6 }),
  filtered: fc.boolean(),
  // the writes between each two pages
  writes: fc.array(
    fc.array(
      fc.oneof(
        row(0).map((r): Write => ({ kind: 'insert', row: r })),
        fc.nat().map((pick): Write => ({ kind: 'delete', pick })),
        fc.tuple(fc.nat(), fc.constantFrom('p', 'q')).map(([pick, note]): Write => ({ kind: 'update', pick, note })),
      ),
      { maxLength: 4 },
    ),
    { maxLength: 30 },
  ),
});

/** SEMANTICS.md's order: nulls first ascending (last descending), the key breaking ties. */
function compare(order: string, a: Row, b: Row): number {
  const items = order === '' ? [] : order.split(',');
  for (const item of [...items, 'ID']) {
    const [name, direction] = item.split(' ') as [string, string | undefined];
    const [x, y] = [a[name], b[name]];
    let c = 0;
    if (x === null || x === undefined) c = y === null || y === undefined ? 0 : -1;
    else if (y === null || y === undefined) c = 1;
    else if (name === 'Score' || name === 'ID') c = Number(x) - Number(y);
    else if (name === 'At') c = Date.parse(String(x)) - Date.parse(String(y));
    else c = String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
    if (c !== 0) return direction === 'desc' ? -c : c;
  }
  return 0;
}

const factories = await storeFactories();
const opened: OpenStore[] = [];
afterAll(async () => {
  for (const o of opened) await o.close();
});

describe.each(Object.keys(factories))('keyset paging under writes on the %s store (property)', (name) => {
  it('returns every row that existed throughout exactly once, in order, however writes interleave', async () => {
    let nextId = 1000;
    await fc.assert(
      fc.asyncProperty(scenario, async ({ initial, order, pageSize, filtered, writes }) => {
        const open = await factories[name]!(model, { Items: initial.map((r) => ({ ...r })) });
        opened.push(open);
        const service = createODataService({ model, store: open.store, pageSize: 6 });
        const call = async (method: string, url: string, body?: unknown): Promise<ServiceResponse> =>
          service.handle({
            method,
            url,
            headers: {
              host: 'test',
              prefer: `odata.maxpagesize=${pageSize}`,
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            },
            ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
          });
        const keep = (r: Row): boolean => !filtered || r['Note'] === 'x' || r['Note'] === 'p';
        // rows present from start to end (never deleted), and among those kept by the filter when one is applied
        const alive = new Map(initial.map((r) => [r['ID'] as number, r]));
        const deleted = new Set<number>();
        const query = [
          ...(order === '' ? [] : [`$orderby=${encodeURIComponent(order)}`]),
          // (a filter on a property the updates change: a row moves out of or into the result while paging)
          ...(filtered ? [`$filter=${encodeURIComponent("Note ne 'y' and Note ne 'q'")}`] : []),
        ];
        let url: string | undefined = `/Items${query.length === 0 ? '' : `?${query.join('&')}`}`;
        const seen: Row[] = [];
        for (let page = 0; url !== undefined; page++) {
          expect(page, 'pages').toBeLessThan(500);
          const response = await call('GET', url);
          expect(response.status, String(response.body)).toBe(200);
          const body = JSON.parse(String(response.body)) as { value: Row[]; '@odata.nextLink'?: string };
          seen.push(...body.value);
          url = body['@odata.nextLink']?.replace(/^http:\/\/test/, '');
          for (const write of writes[page] ?? []) {
            const ids = [...alive.keys()];
            if (write.kind === 'insert') {
              const id = nextId++;
              const answer = await call('POST', '/Items', { ...write.row, ID: id });
              expect(answer.status).toBe(201);
            } else if (ids.length > 0) {
              const id = ids[write.pick % ids.length]!;
              if (write.kind === 'delete') {
                expect((await call('DELETE', `/Items(${id})`)).status).toBe(204);
                alive.delete(id);
                deleted.add(id);
              } else {
                expect((await call('PATCH', `/Items(${id})`, { Note: write.note })).status).toBe(200);
                // a row the update moves out of or into the filtered result did not exist throughout in it
                const before = alive.get(id)!;
                const after = { ...before, Note: write.note };
                if (keep(before) !== keep(after)) deleted.add(id);
                alive.set(id, after);
              }
            }
          }
        }
        const ids = seen.map((r) => r['ID'] as number);
        // never a row twice
        expect(new Set(ids).size, `repeated: ${ids}`).toBe(ids.length);
        // every row that existed throughout (and stayed in the result), exactly once
        for (const r of initial) {
          const id = r['ID'] as number;
          if (deleted.has(id) || !keep(alive.get(id)!)) continue;
          expect(ids, `row ${id} missing (order ${order || 'default'}, pages of ${pageSize})`).toContain(id);
        }
        // and in the query's order
        for (let i = 1; i < seen.length; i++)
          expect(
            compare(order, seen[i - 1]!, seen[i]!),
            `${JSON.stringify(seen[i - 1])} before ${JSON.stringify(seen[i])}`,
          ).toBeLessThan(0);
        await open.close();
        opened.pop();
      }),
      { numRuns: runs },
    );
  }, 240_000);
});
