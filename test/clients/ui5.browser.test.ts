// A real client: OpenUI5's V4 ODataModel in headless Chromium against the reference server, with UI5's default
// batch group ($auto): every read and write goes through `POST .../$batch` (multipart/mixed), writes in change sets.
// It reads a filtered, sorted list in two pages, a grouped and aggregated list through its $$aggregation binding
// parameter (the $apply UI5 derives: methods given, custom aggregates, a grand total), saves an edit (PATCH), and meets a 412 when the
// entity changed behind its back (the @odata.etag UI5 kept no longer matches). UI5 loads unbundled from node_modules/@openui5.
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../server/harness.js';
import { CHROMIUM, launchChromium, openUi5, type Exchange, type Ui5Session } from './ui5/browser.js';

type Row = Record<string, unknown>;
interface ListResult {
  readonly count: string | number;
  readonly pages: Row[][];
}
interface EditResult {
  readonly results: {
    readonly ok: boolean;
    readonly error: { message: string; status: number | null; code: string | null } | null;
    readonly value: unknown;
  }[];
  readonly pendingChanges: boolean;
  readonly messages: { type: string; message: string; technical: boolean }[];
}

const CI = process.env.CI === 'true';
const haveChromium = existsSync(CHROMIUM);
// under CI the browser is required (beforeAll fails without it); elsewhere a machine without it skips, saying so
const skip = !haveChromium && !CI;
if (skip) console.warn(`${CHROMIUM} not found: the OpenUI5 browser test is skipped (CI=true makes it required)`);

/** The same list query UI5 is given below, written as a URL for a plain fetch. */
const FILTER = "Category ne 'Bearings'";
const ORDERBY = 'Category,PartID desc';
const PAGE = 10;

describe.skipIf(skip)(
  skip
    ? `OpenUI5 V4 ODataModel: skipped because ${CHROMIUM} is absent (CI=true makes it required)`
    : 'OpenUI5 V4 ODataModel, default $batch group, against the server on SQLite',
  () => {
    let s: RunningServer;
    let browser: Browser;
    let ui5: Ui5Session;

    const headers = () => ({ API_KEY: s.key, Accept: 'application/json' });
    async function get(path: string): Promise<Row> {
      const response = await fetch(`${s.root}/${path}`, { headers: headers() });
      expect(response.status, `GET ${path}`).toBe(200);
      return (await response.json()) as Row;
    }
    /** Where the exchanges of the next step begin (earlier responses recorded first). */
    async function mark(): Promise<number> {
      await ui5.settled();
      return ui5.exchanges.length;
    }
    /** The $batch exchanges UI5 had with the service from `from` on (an index into ui5.exchanges). */
    async function batchesSince(from: number): Promise<Exchange[]> {
      await ui5.settled();
      return ui5.exchanges.slice(from).filter((e) => e.url === `${s.root}/$batch`);
    }
    const show = (exchanges: readonly Exchange[]) =>
      exchanges
        .map((e) => `${e.method} ${e.url} → ${e.status}\n${e.requestBody ?? ''}\n--- response ---\n${e.responseBody}`)
        .join('\n\n');

    beforeAll(async () => {
      if (!haveChromium) throw new Error(`CI=true requires Chromium at ${CHROMIUM}`);
      s = await startServer('sqlite');
      browser = await launchChromium();
      // UI5's Core boots from some hundred unbundled modules: a few seconds
      ui5 = await openUi5(browser, s.origin, `${s.root}/`, s.key);
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await s?.close();
    });

    it('boots UI5 from node_modules and reads the service $metadata', async () => {
      expect(ui5.version).toMatch(/^1\.\d+\.\d+/);
      const sets = await ui5.call<string[]>('metadata', { model: 'batch' });
      expect(sets).toEqual(expect.arrayContaining(['Parts', 'PurchaseOrders', 'WorkOrders']));
    });

    it('reads a filtered, sorted list in two pages, each through $batch', async () => {
      const expected = await get(
        `Parts?$filter=${encodeURIComponent(FILTER)}&$orderby=${encodeURIComponent(ORDERBY)}&$count=true&$top=${2 * PAGE}&$select=PartID`,
      );
      const expectedIds = (expected['value'] as Row[]).map((r) => r['PartID']);
      expect(expectedIds).toHaveLength(2 * PAGE);

      const from = await mark();
      const result = await ui5.call<ListResult>('readList', {
        model: 'batch',
        path: '/Parts',
        sorters: [{ path: 'Category' }, { path: 'PartID', descending: true }],
        filters: [{ path: 'Category', operator: 'NE', value1: 'Bearings' }],
        pageSize: PAGE,
        pages: 2,
      });
      const batches = await batchesSince(from);

      // the count is an Int64: a string, since UI5 asks for IEEE754Compatible=true
      expect(Number(result.count)).toBe(Number(expected['@odata.count']));
      expect(result.pages.map((page) => page.map((r) => r['PartID']))).toEqual([
        expectedIds.slice(0, PAGE),
        expectedIds.slice(PAGE),
      ]);
      expect(result.pages.flat().every((r) => r['Category'] !== 'Bearings')).toBe(true);

      // no plain GET of the list: both pages went inside multipart $batch requests
      expect(ui5.exchanges.slice(from).filter((e) => e.url.startsWith(`${s.root}/Parts`))).toEqual([]);
      expect(batches.length, show(batches)).toBeGreaterThanOrEqual(1);
      for (const b of batches) {
        expect(b.method).toBe('POST');
        expect(b.requestHeaders['content-type']).toMatch(/^multipart\/mixed;\s*boundary=/);
        expect(b.status, show([b])).toBe(200);
        expect(b.responseHeaders['content-type']).toMatch(/^multipart\/mixed;\s*boundary=/);
      }
      const sent = batches.map((b) => b.requestBody ?? '').join('\n');
      expect(sent).toContain(`$skip=0&$top=${PAGE}`);
      expect(sent).toContain(`$skip=${PAGE}&$top=${PAGE}`);
    });

    it('renders a growing sap.m.List of the same query (its first page)', async () => {
      const expected = await get(
        `Parts?$filter=${encodeURIComponent(FILTER)}&$orderby=${encodeURIComponent(ORDERBY)}&$top=${PAGE}&$select=PartID`,
      );
      const result = await ui5.call<{ titles: string[]; rendered: string[] }>('renderList', {
        model: 'batch',
        path: '/Parts',
        titlePath: 'PartID',
        sorters: [{ path: 'Category' }, { path: 'PartID', descending: true }],
        filters: [{ path: 'Category', operator: 'NE', value1: 'Bearings' }],
        pageSize: PAGE,
      });
      const ids = (expected['value'] as Row[]).map((r) => r['PartID']);
      expect(result.titles).toEqual(ids);
      expect(result.rendered).toEqual(ids);
    });

    it('reads a grouped, aggregated list through $$aggregation: the $apply UI5 derives, answered exactly', async () => {
      // what the server answers a plain request for the same groups (the sums exact: decimal text in JSON numbers)
      const apply = 'groupby((Status),aggregate(ExtendedPrice with max as Biggest,ExtendedPrice with sum as Spend))';
      const expected = (await get(`POLineItems?$apply=${encodeURIComponent(apply)}&$orderby=Spend desc`))[
        'value'
      ] as Row[];
      expect(expected.length).toBeGreaterThan(1);

      const from = await mark();
      const result = await ui5.call<{ count: string | number; rows: Row[] }>('readAggregated', {
        model: 'batch',
        path: '/POLineItems',
        aggregation: {
          group: { Status: {} },
          aggregate: { Spend: { name: 'ExtendedPrice', with: 'sum' }, Biggest: { name: 'ExtendedPrice', with: 'max' } },
        },
        sorters: [{ path: 'Spend', descending: true }],
        length: 10,
      });
      const batches = await batchesSince(from);
      const sent = batches.map((b) => decodeURIComponent(b.requestBody ?? '')).join('\n');
      // UI5's own request: $apply from $$aggregation, the sorter, count and page as options beside it
      expect(sent, show(batches)).toContain(
        `GET POLineItems?$count=true&$apply=${apply}&$orderby=Spend desc&$skip=0&$top=10 HTTP/1.1`,
      );
      for (const b of batches) expect(b.status, show([b])).toBe(200);

      expect(Number(result.count)).toBe(expected.length);
      // UI5 asks IEEE754Compatible=true: the decimals come as strings, the same digits
      expect(result.rows.map((r) => [r['Status'], Number(r['Spend']), Number(r['Biggest'])])).toEqual(
        expected.map((r) => [r['Status'], r['Spend'], r['Biggest']]),
      );
    });

    it('reads custom aggregates: UI5 writes aggregate(Name) for an aggregate without "with"', async () => {
      const expected = (
        await get(
          `POLineItems?$apply=${encodeURIComponent('groupby((Status),aggregate(ExtendedPrice with sum as ExtendedPrice,QuantityOrdered with sum as QuantityOrdered))')}&$orderby=Status`,
        )
      )['value'] as Row[];
      const from = await mark();
      const result = await ui5.call<{ count: string | number; rows: Row[] }>('readAggregated', {
        model: 'batch',
        path: '/POLineItems',
        aggregation: { group: { Status: {} }, aggregate: { ExtendedPrice: {}, QuantityOrdered: {} } },
        sorters: [{ path: 'Status' }],
        length: 10,
      });
      const batches = await batchesSince(from);
      const sent = batches.map((b) => decodeURIComponent(b.requestBody ?? '')).join('\n');
      expect(sent, show(batches)).toContain('$apply=groupby((Status),aggregate(ExtendedPrice,QuantityOrdered))');
      for (const b of batches) expect(b.status, show([b])).toBe(200);
      expect(result.rows.map((r) => [r['Status'], Number(r['ExtendedPrice']), Number(r['QuantityOrdered'])])).toEqual(
        expected.map((r) => [r['Status'], r['ExtendedPrice'], r['QuantityOrdered']]),
      );
    });

    it('reads a grand total beside the groups: UI5 asks it with concat, as the first row', async () => {
      const total = (
        await get(`POLineItems?$apply=${encodeURIComponent('aggregate(ExtendedPrice with sum as Spend)')}`)
      )['value'] as Row[];
      const groups = (
        await get(
          `POLineItems?$apply=${encodeURIComponent('groupby((Status),aggregate(ExtendedPrice with sum as Spend))')}&$orderby=Status`,
        )
      )['value'] as Row[];
      const from = await mark();
      const result = await ui5.call<{ count: string | number; rows: Row[] }>('readAggregated', {
        model: 'batch',
        path: '/POLineItems',
        aggregation: {
          group: { Status: {} },
          aggregate: { Spend: { name: 'ExtendedPrice', with: 'sum', grandTotal: true } },
        },
        sorters: [{ path: 'Status' }],
        length: 10,
      });
      const batches = await batchesSince(from);
      const sent = batches.map((b) => decodeURIComponent(b.requestBody ?? '')).join('\n');
      // the grand total, then the groups with the count beside the page: concat inside concat
      expect(sent, show(batches)).toContain(
        'GET POLineItems?$apply=concat(aggregate(ExtendedPrice with sum as Spend),groupby((Status),aggregate(ExtendedPrice with sum as Spend))/orderby(Status)/concat(aggregate($count as UI5__count),top(9))) HTTP/1.1',
      );
      for (const b of batches) expect(b.status, show([b])).toBe(200);
      expect(Number(result.count)).toBe(groups.length);
      const [grand, ...rest] = result.rows;
      expect(grand).toMatchObject({ '@$ui5.node.isTotal': true, '@$ui5.node.level': 0, Status: null });
      expect(Number(grand!['Spend'])).toBe(total[0]!['Spend']);
      expect(rest.map((r) => [r['Status'], Number(r['Spend']), r['@$ui5.node.level']])).toEqual(
        groups.map((g) => [g['Status'], g['Spend'], 1]),
      );
    });

    it('saves edits of two entities: PATCHes in one change set of a $batch, stored', async () => {
      const orders = (await get('PurchaseOrders?$orderby=PONumber&$top=2&$select=PONumber'))['value'] as Row[];
      const keys = orders.map((o) => String(o['PONumber']));
      const notes = keys.map((key) => `${key} edited in UI5 at ${new Date().toISOString()}`);

      const ids: string[] = [];
      for (const key of keys)
        ids.push(
          (await ui5.call<{ id: string }>('readEntity', { model: 'batch', path: `/PurchaseOrders('${key}')` })).id,
        );
      const from = await mark();
      // UI5 sends a lone change as a plain part of the $batch; two changes make a change set
      const edit = await ui5.call<EditResult>('edit', {
        edits: ids.map((id, i) => ({ id, property: 'Notes', value: notes[i] })),
        submit: '$auto',
      });
      const batches = await batchesSince(from);

      expect(
        edit.results.map((r) => r.error),
        show(batches),
      ).toEqual([null, null]);
      const batch = batches.find((b) => (b.requestBody ?? '').includes(`PATCH PurchaseOrders('${keys[0]}')`));
      expect(batch, show(batches)).toBeDefined();
      const body = batch!.requestBody!;
      expect(body).toMatch(/Content-Type:\s*multipart\/mixed;\s*boundary=changeset/i);
      expect(body).toContain(`PATCH PurchaseOrders('${keys[1]}')`);
      expect(batch!.status).toBe(200);

      for (const [i, key] of keys.entries()) expect((await get(`PurchaseOrders('${key}')`))['Notes']).toBe(notes[i]);
    });

    it('meets a 412 when the entity changed behind its back, and the stale edit is not stored', async () => {
      const orders = (await get('PurchaseOrders?$orderby=PONumber&$top=3&$select=PONumber'))['value'] as Row[];
      const key = String(orders[2]!['PONumber']);

      // UI5 reads the entity and keeps its ETag
      const { id, object } = await ui5.call<{ id: string; object: Row }>('readEntity', {
        model: 'batch',
        path: `/PurchaseOrders('${key}')`,
      });
      const etag = object['@odata.etag'];
      expect(typeof etag, 'the entity UI5 read has an @odata.etag').toBe('string');

      // someone else reads and changes it (with the ETag of their own read, in case the service requires If-Match)
      const theirs = await fetch(`${s.root}/PurchaseOrders('${key}')`, { headers: headers() });
      const theirEtag = theirs.headers.get('etag') ?? ((await theirs.json()) as Row)['@odata.etag'];
      expect(theirEtag, 'a plain GET gives the same ETag as the read inside $batch').toBe(etag);
      const behind = `changed behind UI5's back at ${new Date().toISOString()}`;
      const other = await fetch(`${s.root}/PurchaseOrders('${key}')`, {
        method: 'PATCH',
        headers: { ...headers(), 'Content-Type': 'application/json', 'If-Match': String(theirEtag) },
        body: JSON.stringify({ Notes: behind }),
      });
      expect(other.status).toBe(200);
      const newer = other.headers.get('etag') ?? ((await other.json()) as Row)['@odata.etag'];
      expect(typeof newer).toBe('string');
      expect(newer, 'a change gives a new ETag').not.toBe(etag);

      // UI5's edit carries the old ETag in If-Match: 412, reported as a failure
      const from = await mark();
      const edit = await ui5.call<EditResult>('edit', {
        edits: [{ id, property: 'Notes', value: 'stale edit from UI5' }],
        submit: '$auto',
      });
      const batches = await batchesSince(from);
      const batch = batches.find((b) => (b.requestBody ?? '').includes(`PATCH PurchaseOrders('${key}')`));
      expect(batch, show(batches)).toBeDefined();
      expect(batch!.requestBody).toContain(`If-Match:${String(etag)}`);
      // the $batch itself succeeds: the 412 is the answer of its part
      expect(batch!.status, show(batches)).toBe(200);
      const [result] = edit.results;
      expect(result!.ok, show(batches)).toBe(false);
      expect(result!.error?.status, show(batches)).toBe(412);
      // UI5 reports it (a message for the failed PATCH) and resets the property to what it read
      expect(edit.messages.some((m) => m.type === 'Error')).toBe(true);
      expect(result!.value).toBe(object['Notes'] ?? null);
      expect(edit.pendingChanges).toBe(false);

      expect((await get(`PurchaseOrders('${key}')`))['Notes']).toBe(behind);
    });
  },
);
