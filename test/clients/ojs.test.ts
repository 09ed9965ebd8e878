// A second real OData client from npm, o.js (package `odata`), reading and writing through `$batch` against the running
// server on every storage. o.js writes a multipart/mixed batch (CRLF lines, a Content-ID per part, absolute request
// URLs unless `useRelativeURLs`, with `useChangset` its writes in one change set) and reads the answer by splitting
// the text on the boundary and on blank lines (OBatch.parseResponse): a part it cannot read comes back as raw text.
import { o, type OdataBatchConfig, type OHandler } from 'odata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, storages, type RunningServer } from '../server/harness.js';

type Row = Record<string, unknown>;

/** One answer as o.js hands it back: the part's Content-ID, the status of its status line, its JSON body (`value` unwrapped). */
interface OjsAnswer {
  readonly contentId: number | undefined;
  readonly status: number;
  readonly body: unknown;
}

const kinds = await storages({ mysql: true });

/** o.js's answers, checked: a part it could not read is a string or has no status, which would fail later and vaguely. */
function answers(result: unknown): OjsAnswer[] {
  if (!Array.isArray(result)) throw new Error(`o.js gave no list of answers: ${JSON.stringify(result)}`);
  return result.map((part: unknown) => {
    const status = typeof part === 'object' && part !== null ? (part as Row)['status'] : undefined;
    if (typeof status !== 'number' || Number.isNaN(status))
      throw new Error(`o.js could not read a part of the answer: ${JSON.stringify(part)}`);
    return part as OjsAnswer;
  });
}

/** Sends the handler's queued requests as one batch; o.js throws the Response of a batch that is not 2xx. */
async function send(handler: OHandler): Promise<OjsAnswer[]> {
  let result: unknown;
  try {
    result = await handler.batch();
  } catch (error) {
    if (error instanceof Response)
      throw new Error(`POST $batch answered ${error.status}: ${(await error.text()).slice(0, 400)}`);
    throw error;
  }
  return answers(result);
}

describe.each(kinds)('o.js ($batch) against the server on %s', (storage) => {
  let s: RunningServer;
  let part: Row;
  let order: Row;

  /**
   * An o.js handler on the service root. The trailing slash matters: o.js resolves resources with `new URL(resource,
   * root)`. The batch's own headers are `batch.headers` alone (o.js sends neither `headers` nor anything else on the
   * outer POST), so the key goes there too; `batch` replaces o.js's defaults whole, hence every field.
   */
  function client(batch: Partial<OdataBatchConfig> = {}, outer: Record<string, string> = {}): OHandler {
    return o(`${s.root}/`, {
      headers: new Headers({ 'Content-Type': 'application/json', API_KEY: s.key }),
      batch: {
        boundaryPrefix: 'batch_',
        changsetBoundaryPrefix: 'changset_',
        endpoint: '$batch',
        headers: new Headers({ API_KEY: s.key, ...outer }),
        useChangset: false,
        useRelativeURLs: true,
        ...batch,
      },
    });
  }

  /** A plain GET of `path` under the service root. */
  async function plain(path: string): Promise<{ status: number; text: string }> {
    const response = await fetch(new URL(path, `${s.root}/`), { headers: { API_KEY: s.key } });
    return { status: response.status, text: await response.text() };
  }
  async function plainJson(path: string): Promise<Row> {
    const { status, text } = await plain(path);
    expect(status, text).toBe(200);
    return JSON.parse(text) as Row;
  }

  beforeAll(async () => {
    s = await startServer(storage);
    part = ((await plainJson('Parts?$top=1&$orderby=PartID desc'))['value'] as Row[])[0]!;
    order = ((await plainJson('PurchaseOrders?$top=1&$orderby=PONumber'))['value'] as Row[])[0]!;
  }, 60_000);
  afterAll(async () => s?.close());

  // o.js writes absolute request URLs by default and relative ones (to the service root) with useRelativeURLs
  it.each([false, true])(
    'answers several reads in one batch as plain GETs do (relative URLs: %s)',
    async (relative) => {
      const filtered = `Parts?$filter=Category eq '${String(part['Category'])}'&$orderby=QuantityOnHand desc,PartID&$top=5`;
      const byKey = `Parts('${String(part['PartID'])}')`;
      const count = 'Parts/$count?$filter=IsCritical eq true';
      const result = await send(client({ useRelativeURLs: relative }).get(filtered).get(byKey).get(count));
      expect(result.map((a) => [a.contentId, a.status])).toEqual([
        [1, 200],
        [2, 200],
        [3, 200],
      ]);
      // o.js unwraps a collection's `value`; the entity comes whole, @odata.context included
      const rows = (await plainJson(filtered))['value'] as Row[];
      expect(rows.length).toBeGreaterThan(0);
      expect(result[0]!.body).toEqual(rows);
      expect(result[1]!.body).toEqual(await plainJson(byKey));
      // $count's text/plain number: o.js JSON-parses any body it can
      expect(result[2]!.body).toBe(Number((await plain(count)).text));
    },
  );

  // a change set's batch holds writes only: o.js moves them into one change set ahead of the GETs, writes the first GET
  // after it without a delimiter (lost in the change set's epilogue) and hands back the change set's answers alone
  it.each([false, true])('creates and patches in one batch, both stored (in a change set: %s)', async (changeset) => {
    const note = `o.js ${changeset ? 'change set' : 'batch'} ${storage} ${Date.now()}`;
    const result = await send(
      client({ useChangset: changeset })
        .post('PurchaseOrders', { VendorID: 'V-OJS', Buyer: 'kim', Notes: note })
        .patch(`PurchaseOrders('${String(order['PONumber'])}')`, { Notes: note }),
    );
    // with a change set o.js returns the change set's list itself, not a list holding it (parseResponse: parsedData[0])
    expect(result.map((a) => [a.contentId, a.status])).toEqual([
      [1, 201],
      [2, 200],
    ]);
    const created = result[0]!.body as Row;
    expect(created['PONumber']).toMatch(/^PO-\d{6}$/);
    expect((result[1]!.body as Row)['Notes']).toBe(note);
    expect(await plainJson(`PurchaseOrders('${String(created['PONumber'])}')`)).toMatchObject({
      VendorID: 'V-OJS',
      Buyer: 'kim',
      Notes: note,
    });
    expect((await plainJson(`PurchaseOrders('${String(order['PONumber'])}')`))['Notes']).toBe(note);
  });

  it('reports a failing last request by its status, the reads before it answered', async () => {
    // without continue-on-error a multipart batch stops at its first failure: the failure goes last
    const byKey = `Parts('${String(part['PartID'])}')`;
    const result = await send(
      client().get(byKey).get('PurchaseOrders?$top=2&$orderby=PONumber').patch("PurchaseOrders('PO-NOPE-OJS')", {
        Notes: 'never',
      }),
    );
    expect(result.map((a) => [a.contentId, a.status])).toEqual([
      [1, 200],
      [2, 200],
      [3, 404],
    ]);
    expect(result[0]!.body).toEqual(await plainJson(byKey));
    expect((result[1]!.body as Row[]).length).toBe(2);
    expect(result[2]!.body).toMatchObject({ error: { code: expect.any(String) } });
  });

  it('with odata.continue-on-error answers every part: a 404 and a 400 among answered ones', async () => {
    const note = `o.js continue ${storage} ${Date.now()}`;
    const byKey = `Parts('${String(part['PartID'])}')`;
    const result = await send(
      client({}, { Prefer: 'odata.continue-on-error' })
        .get(byKey)
        .patch("PurchaseOrders('PO-NOPE-OJS')", { Notes: 'never' })
        // a field PurchaseOrder does not have: 400, nothing written
        .post('PurchaseOrders', { VendorID: 'V-OJS', NoSuchField: 1 })
        .post('PurchaseOrders', { VendorID: 'V-OJS', Notes: note }),
    );
    expect(result.map((a) => [a.contentId, a.status])).toEqual([
      [1, 200],
      [2, 404],
      [3, 400],
      [4, 201],
    ]);
    expect(result[0]!.body).toEqual(await plainJson(byKey));
    expect(result[1]!.body).toMatchObject({ error: { code: expect.any(String) } });
    expect(result[2]!.body).toMatchObject({ error: { code: expect.any(String) } });
    const created = result[3]!.body as Row;
    expect((await plainJson(`PurchaseOrders('${String(created['PONumber'])}')`))['Notes']).toBe(note);
  });

  it('a change set with a failing request is one failed answer, and none of it is stored', async () => {
    const note = `o.js rolled back ${storage} ${Date.now()}`;
    const result = await send(
      client({ useChangset: true })
        .post('PurchaseOrders', { VendorID: 'V-OJS', Notes: note })
        .patch("PurchaseOrders('PO-NOPE-OJS')", { Notes: note }),
    );
    // the failed change set is a single application/http part, which o.js reads as an ordinary answer
    expect(result.map((a) => a.status)).toEqual([404]);
    expect(result[0]!.body).toMatchObject({ error: { code: expect.any(String) } });
    const stored = await plainJson(`PurchaseOrders?$filter=Notes eq '${note}'`);
    expect(stored['value']).toEqual([]);
  });
});
