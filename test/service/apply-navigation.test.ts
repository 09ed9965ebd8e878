// Navigations inside $apply's transformations on the stores without SQL: the memory store makes every transformation
// itself with its related rows at hand (Store.prepareApply), so `compute(Twin/S as TS)` reads through the navigation as
// a filter does; a store without prepareApply (the tests' tiny one) takes navigations in the leading filters, which
// its own read evaluates, and answers a clear 501 for the rest. (The SQL stores make such a grouping with a join:
// test/server/apply.e2e.test.ts.)
import { describe, expect, it } from 'vitest';
import { defineModel, type Row } from '../../src/model/schema.js';
import { MemoryStore } from '../../src/service/memory-store.js';
import { createODataService } from '../../src/service/service.js';
import type { Store } from '../../src/service/store.js';
import { Part, Thing } from '../backends/sql/fixtures.js';
import { tinyStore } from './tiny-store.js';

const model = defineModel({ namespace: 'Things', entitySets: { Things: Thing, Parts: Part } });

const thing = (Id: number, I: number | null, S: string | null, D: string | null): Row => ({
  Id,
  S,
  T: null,
  B: null,
  I,
  L: null,
  D,
  F: null,
  Day: null,
  At: null,
  G: null,
});
// Twin is the thing whose Id is I: 1 → 2 ('b'), 2 → 3 ('a'), 3 → 1 ('a'), 4 → 9 (none), 5 → 3 ('a')
const things = [
  thing(1, 2, 'a', '1.5'),
  thing(2, 3, 'b', '2.25'),
  thing(3, 1, 'a', null),
  thing(4, 9, 'c', '10'),
  thing(5, 3, 'b', '0.75'),
];

async function get(store: Store, url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const service = createODataService({ model, store });
  const response = await service.handle({ method: 'GET', url, headers: { host: 'test' } });
  return { status: response.status, body: JSON.parse(String(response.body)) as Record<string, unknown> };
}

describe('navigations inside $apply on the stores without SQL', () => {
  const grouped = `/Things?$apply=${encodeURIComponent('compute(Twin/S as TwinS)/groupby((TwinS),aggregate($count as N,D with sum as Total))')}`;

  it('the memory store reads through them in compute, filter and aggregate, as a filter does', async () => {
    const store = new MemoryStore(model, { Things: things.map((t) => ({ ...t })), Parts: [] });
    const answer = await get(store, grouped);
    expect(answer.status).toBe(200);
    // the twins' S: 'b' (1), 'a' (2, 3, 5), null (4: no twin); groups in ascending order, null first
    expect(answer.body['value']).toEqual([
      { TwinS: null, N: 1, Total: 10 },
      { TwinS: 'a', N: 3, Total: 3 },
      { TwinS: 'b', N: 1, Total: 1.5 },
    ]);
    const filtered = await get(
      store,
      `/Things?$apply=${encodeURIComponent("filter(S eq 'b')/filter(Twin/S eq 'a')/aggregate(D with sum as Total,Twin/Id with max as Last)")}`,
    );
    expect(filtered.body['value']).toEqual([{ Total: 3, Last: 3 }]);
  });

  it('a store without prepareApply takes them in the leading filters, and answers a 501 that says so elsewhere', async () => {
    const store = tinyStore(model, { Things: things, Parts: [] });
    const leading = await get(
      store,
      `/Things?$apply=${encodeURIComponent("filter(Twin/S eq 'a')/groupby((S),aggregate($count as N))")}`,
    );
    expect(leading.status).toBe(200);
    expect(leading.body['value']).toEqual([
      { S: 'a', N: 1 },
      { S: 'b', N: 2 },
    ]);
    const inside = await get(store, grouped);
    expect(inside.status).toBe(501);
    expect(inside.body).toMatchObject({
      error: {
        code: 'NotImplemented',
        target: '$apply',
        message: expect.stringContaining('cannot read through navigations inside $apply'),
      },
    });
  });
});

describe('groupby by a navigation path (Data Aggregation CS03 §3.1.3)', () => {
  const memory = (): Store => new MemoryStore(model, { Things: things.map((t) => ({ ...t })), Parts: [] });

  it('groups by the related entity’s value, nested under the navigation, a missing one under null', async () => {
    const answer = await get(
      memory(),
      `/Things?$apply=${encodeURIComponent('groupby((Twin/S),aggregate($count as N,D with sum as Total))')}`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body['@odata.context']).toBe('http://test/$metadata#Things(Twin(S),N,Total)');
    // the twins' S: 'b' (1), 'a' (2, 3, 5), null (4: no twin); groups in ascending order, null first
    expect(answer.body['value']).toEqual([
      { Twin: { S: null }, N: 1, Total: 10 },
      { Twin: { S: 'a' }, N: 3, Total: 3 },
      { Twin: { S: 'b' }, N: 1, Total: 1.5 },
    ]);
  });

  it('beside plain properties, two steps deep, and the distinct values alone', async () => {
    const both = await get(
      memory(),
      `/Things?$apply=${encodeURIComponent('groupby((S,Twin/S),aggregate($count as N))')}`,
    );
    expect(both.status).toBe(200);
    expect(both.body['@odata.context']).toBe('http://test/$metadata#Things(Twin(S),S,N)');
    // (1 a→b, 2 b→a, 3 a→a, 4 c→null, 5 b→a)
    expect(both.body['value']).toEqual([
      { Twin: { S: 'a' }, S: 'a', N: 1 },
      { Twin: { S: 'b' }, S: 'a', N: 1 },
      { Twin: { S: 'a' }, S: 'b', N: 2 },
      { Twin: { S: null }, S: 'c', N: 1 },
    ]);
    const deep = await get(memory(), `/Things?$apply=${encodeURIComponent('groupby((Twin/Twin/Id,Twin/S))')}`);
    expect(deep.status).toBe(200);
    expect(deep.body['@odata.context']).toBe('http://test/$metadata#Things(Twin(Twin(Id),S))');
    // twins of twins: 1→2→3, 2→3→1, 3→1→2, 4→none, 5→3→1
    expect(deep.body['value']).toEqual([
      { Twin: { Twin: { Id: null }, S: null } },
      { Twin: { Twin: { Id: 1 }, S: 'a' } },
      { Twin: { Twin: { Id: 2 }, S: 'a' } },
      { Twin: { Twin: { Id: 3 }, S: 'b' } },
    ]);
  });

  it('$filter, $orderby and $select after $apply name the path; a transformation after the grouping reads it', async () => {
    const base = `/Things?$apply=${encodeURIComponent('groupby((Twin/S),aggregate($count as N))')}`;
    const ordered = await get(memory(), `${base}&$orderby=${encodeURIComponent('Twin/S desc')}`);
    expect(ordered.body['value']).toEqual([
      { Twin: { S: 'b' }, N: 1 },
      { Twin: { S: 'a' }, N: 3 },
      { Twin: { S: null }, N: 1 },
    ]);
    const filtered = await get(memory(), `${base}&$filter=${encodeURIComponent("Twin/S eq 'a'")}`);
    expect(filtered.body['value']).toEqual([{ Twin: { S: 'a' }, N: 3 }]);
    const selected = await get(memory(), `${base}&$select=N`);
    expect(selected.body['@odata.context']).toBe('http://test/$metadata#Things(N)');
    expect(selected.body['value']).toEqual([{ N: 1 }, { N: 3 }, { N: 1 }]);
    // the nested values are selected by the navigation's name; a path into them is a 400 that says so (not "expand
    // it": $expand beside $apply is a 501)
    const into = await get(memory(), `${base}&$select=${encodeURIComponent('Twin/S')}`);
    expect(into.status).toBe(400);
    expect(JSON.stringify(into.body)).toContain('select Twin itself, which holds the grouped values: $select=Twin');
    const inside = await get(
      memory(),
      `/Things?$apply=${encodeURIComponent("groupby((Twin/S),aggregate($count as N))/filter(Twin/S ne 'a')/orderby(Twin/S desc)")}`,
    );
    expect(inside.status).toBe(200);
    // (null ne 'a' is true)
    expect(inside.body['value']).toEqual([
      { Twin: { S: 'b' }, N: 1 },
      { Twin: { S: null }, N: 1 },
    ]);
  });

  it('a store without prepareApply answers the 501 that says it cannot read through navigations', async () => {
    const answer = await get(
      tinyStore(model, { Things: things, Parts: [] }),
      `/Things?$apply=${encodeURIComponent('groupby((Twin/S),aggregate($count as N))')}`,
    );
    expect(answer.status).toBe(501);
    expect(answer.body).toMatchObject({ error: { code: 'NotImplemented', target: '$apply' } });
  });
});
