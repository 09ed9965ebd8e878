// $search and $compute on the reference server, end to end on every storage (on PostgreSQL through the GIN indexes
// the store makes for the searchable properties): the entities a search keeps are exactly those whose searchable
// text holds its words, worked out here from plain reads, and the 501 and 400 of what it does not take.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchText } from '../../src/values/text.js';
import { startServer, storages, type RunningServer } from './harness.js';

const kinds = await storages({ mysql: true });
type Json = Record<string, unknown> & { value?: Record<string, unknown>[] };
const q = encodeURIComponent;

describe.each(kinds)('$search and $compute on the reference server on %s', (storage) => {
  let s: RunningServer;
  beforeAll(async () => {
    s = await startServer(storage, { pageSize: 1000 });
  }, 60_000);
  afterAll(async () => s?.close());

  const get = (path: string) => fetch(`${s.root}${path}`, { headers: { API_KEY: s.key } });
  const json = async (path: string): Promise<Json> => {
    const response = await get(path);
    expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
    return (await response.json()) as Json;
  };

  it('keeps the work orders whose description holds the words, phrases and operators asked', async () => {
    const all = (await json('/WorkOrders?$select=WorkOrderID,Description')).value!;
    const has = (text: unknown, words: string): boolean =>
      typeof text === 'string' && searchText(text).includes(` ${words} `);
    const cases: [string, (d: unknown) => boolean][] = [
      ['chiller', (d) => has(d, 'chiller')],
      ['chiller OR "heat exchanger"', (d) => has(d, 'chiller') || has(d, 'heat exchanger')],
      ['lubrication route NOT fan', (d) => has(d, 'lubrication') && has(d, 'route') && !has(d, 'fan')],
      ['LUBRICATION', (d) => has(d, 'lubrication')],
    ];
    for (const [search, keep] of cases) {
      const found = (await json(`/WorkOrders?$search=${q(search)}&$select=WorkOrderID&$count=true`)) as Json;
      const expected = all.filter((wo) => keep(wo['Description'])).map((wo) => wo['WorkOrderID']);
      expect(
        found.value!.map((wo) => wo['WorkOrderID']),
        search,
      ).toEqual(expected);
      expect(found['@odata.count'], search).toBe(expected.length);
    }
    expect(all.some((wo) => has(wo['Description'], 'chiller'))).toBe(true);
  });

  it('answers 501 where nothing is searchable and 400 for a mistake, at its position', async () => {
    const none = await get(`/MeterReadings?$search=x`);
    expect(none.status).toBe(501);
    const bad = await get(`/WorkOrders?$search=${q('(pump')}`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toBe(
      'Unexpected end of $search at position 5 of $search; expected )',
    );
  });

  it('computes properties beside the entity, filtered and ordered by them in the database', async () => {
    const lines = (await json('/POLineItems?$select=PONumber,LineNumber,QuantityOrdered,QuantityReceived')).value!;
    const open = (await json(
      `/POLineItems?$compute=${q('QuantityOrdered sub QuantityReceived as Open')}&$filter=${q('Open gt 0')}&$orderby=${q('Open desc,PONumber,LineNumber')}&$select=PONumber,LineNumber,Open`,
    )) as Json;
    const expected = lines
      .map((l): Record<string, unknown> & { Open: number } => ({
        ...l,
        Open: Number(l['QuantityOrdered']) - Number(l['QuantityReceived']),
      }))
      .filter((l) => l.Open > 0)
      .sort(
        (a, b) =>
          b.Open - a.Open ||
          String(a['PONumber']).localeCompare(String(b['PONumber'])) ||
          Number(a['LineNumber']) - Number(b['LineNumber']),
      );
    expect(open.value!.map((l) => [l['PONumber'], l['LineNumber']])).toEqual(
      expected.map((l) => [l['PONumber'], l['LineNumber']]),
    );
    for (const [i, l] of open.value!.entries()) expect(Number(l['Open'])).toBeCloseTo(expected[i]!.Open, 6);
  });
});
