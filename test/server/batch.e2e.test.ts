// $batch against the running server on every storage: multipart/mixed (what UI5 and most clients send) and JSON
// (4.01). Change sets are one transaction: a change set whose last request fails leaves nothing written; Content-ID
// references reach entities created earlier in the change set; credentials and tenancy apply to every request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, storages, type RunningServer } from './harness.js';

type Row = Record<string, unknown>;

/** One request of a multipart batch: its request line, headers and body; `changeset` puts it in a change set. */
interface Part {
  readonly method: string;
  readonly url: string;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  readonly id?: string;
}

/** A multipart/mixed batch body (CRLF line ends), each item a request or a change set (an array of requests). */
function multipart(items: readonly (Part | readonly Part[])[], boundary = 'batch_1'): string {
  const request = (p: Part): string[] => [
    'Content-Type: application/http',
    'Content-Transfer-Encoding: binary',
    ...(p.id === undefined ? [] : [`Content-ID: ${p.id}`]),
    '',
    `${p.method} ${p.url} HTTP/1.1`,
    ...Object.entries({ ...(p.body === undefined ? {} : { 'Content-Type': 'application/json' }), ...p.headers }).map(
      ([k, v]) => `${k}: ${v}`,
    ),
    '',
    p.body === undefined ? '' : JSON.stringify(p.body),
  ];
  const lines: string[] = [];
  items.forEach((item, i) => {
    lines.push(`--${boundary}`);
    if (!Array.isArray(item)) {
      lines.push(...request(item as Part));
      return;
    }
    const cs = `changeset_${i}`;
    lines.push(`Content-Type: multipart/mixed; boundary=${cs}`, '');
    for (const p of item as readonly Part[]) lines.push(`--${cs}`, ...request(p));
    lines.push(`--${cs}--`);
  });
  lines.push(`--${boundary}--`, '');
  return lines.join('\r\n');
}

interface PartAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly id?: string;
  /** The change set it answers in (its index among the top-level parts), when it is one. */
  readonly changeset?: number;
}

/** The answers of a multipart batch response, in order, change sets flattened (their index kept). */
function answers(contentType: string, text: string): PartAnswer[] {
  const boundaryOf = (type: string): string => /boundary=("?)([^";]+)\1/i.exec(type)![2]!;
  const split = (body: string, boundary: string): string[] => {
    const pieces = body.split(`--${boundary}`);
    expect(pieces[pieces.length - 1]!.startsWith('--')).toBe(true);
    return pieces.slice(1, -1).map((p) => p.replace(/^\r\n/, '').replace(/\r\n$/, ''));
  };
  const headersOf = (block: string): Record<string, string> =>
    Object.fromEntries(
      block
        .split('\r\n')
        .filter((l) => l !== '')
        .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
  const out: PartAnswer[] = [];
  const http = (part: string, changeset?: number): void => {
    const [mime, ...rest] = part.split('\r\n\r\n');
    const message = rest.join('\r\n\r\n');
    const [head, ...body] = message.split('\r\n\r\n');
    const [statusLine, ...headerLines] = head!.split('\r\n');
    const id = headersOf(mime!)['content-id'];
    out.push({
      status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)![1]),
      headers: headersOf(headerLines.join('\r\n')),
      body: body.join('\r\n\r\n'),
      ...(id === undefined ? {} : { id }),
      ...(changeset === undefined ? {} : { changeset }),
    });
  };
  split(text, boundaryOf(contentType)).forEach((part, index) => {
    const mime = headersOf(part.split('\r\n\r\n')[0]!);
    if (mime['content-type']!.startsWith('multipart/mixed')) {
      const inner = part.slice(part.indexOf('\r\n\r\n') + 4);
      for (const p of split(inner, boundaryOf(mime['content-type']!))) http(p, index);
    } else http(part, undefined);
  });
  return out;
}

const kinds = await storages({ mysql: true });

describe.each(kinds)('$batch on %s', (storage) => {
  let s: RunningServer;
  beforeAll(async () => {
    s = await startServer(storage);
  }, 60_000);
  afterAll(async () => s?.close());

  const post = (body: string, headers: Record<string, string> = {}, key = s.key): Promise<Response> =>
    fetch(`${s.root}/$batch`, {
      method: 'POST',
      headers: { API_KEY: key, 'content-type': 'multipart/mixed; boundary=batch_1', ...headers },
      body,
    });
  const json = (requests: unknown[], headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${s.root}/$batch`, {
      method: 'POST',
      headers: { API_KEY: s.key, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ requests }),
    });
  const get = async (path: string): Promise<Row> =>
    (await (await fetch(`${s.root}/${path}`, { headers: { API_KEY: s.key } })).json()) as Row;
  const count = async (path: string): Promise<number> =>
    Number(await (await fetch(`${s.root}/${path}/$count`, { headers: { API_KEY: s.key } })).text());

  it('answers reads in order, each as it would be answered on its own', async () => {
    const response = await post(
      multipart([
        { method: 'GET', url: 'Parts?$top=2&$select=PartID&$orderby=PartID%20desc' },
        { method: 'GET', url: `/${s.site}/ODataApi/v1/Parts/$count` },
        { method: 'GET', url: `${s.root}/Accounts?$top=1` },
        { method: 'GET', url: 'Nowhere' },
      ]),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^multipart\/mixed; boundary=/);
    const parts = answers(response.headers.get('content-type')!, await response.text());
    expect(parts.map((p) => p.status)).toEqual([200, 200, 200, 404]);
    expect(JSON.parse(parts[0]!.body)).toEqual(await get('Parts?$top=2&$select=PartID&$orderby=PartID%20desc'));
    expect(parts[1]!.body).toBe(String(await count('Parts')));
    expect(parts[0]!.headers['odata-version']).toBe('4.01');
    expect(JSON.parse(parts[3]!.body).error.code).toBe('NotFound');
  });

  it('keeps a change set whole: an order and its line through a Content-ID reference, in one transaction', async () => {
    const before = await count('PurchaseOrders');
    const response = await post(
      multipart([
        [
          { id: '1', method: 'POST', url: 'PurchaseOrders', body: { VendorID: 'V-BATCH', Buyer: 'batch' } },
          {
            id: '2',
            method: 'POST',
            url: '$1/Lines',
            body: { Description: 'Bolts', QuantityOrdered: 3, UnitOfMeasure: 'EA', UnitPrice: 2.5 },
          },
          { id: '3', method: 'PATCH', url: '$1', body: { Notes: 'made in a batch' } },
        ],
      ]),
    );
    const parts = answers(response.headers.get('content-type')!, await response.text());
    expect(parts.map((p) => [p.id, p.status, p.changeset])).toEqual([
      ['1', 201, 0],
      ['2', 201, 0],
      ['3', 200, 0],
    ]);
    const order = JSON.parse(parts[0]!.body) as Row;
    expect(parts[0]!.headers['location']).toBe(`${s.root}/PurchaseOrders('${String(order['PONumber'])}')`);
    expect(await count('PurchaseOrders')).toBe(before + 1);
    const stored = await get(`PurchaseOrders('${String(order['PONumber'])}')?$expand=Lines`);
    expect(stored['Notes']).toBe('made in a batch');
    expect((stored['Lines'] as Row[]).map((l) => [l['LineNumber'], l['Description'], l['ExtendedPrice']])).toEqual([
      [1, 'Bolts', 7.5],
    ]);
  });

  it('leaves nothing written when the last request of a change set fails, and answers its error once', async () => {
    const [orders, lines] = [await count('PurchaseOrders'), await count('POLineItems')];
    const response = await post(
      multipart([
        [
          { id: 'a', method: 'POST', url: 'PurchaseOrders', body: { VendorID: 'V-ROLLBACK' } },
          {
            id: 'b',
            method: 'POST',
            url: '$a/Lines',
            body: { Description: 'ok', QuantityOrdered: 1, UnitOfMeasure: 'EA', UnitPrice: 1 },
          },
          {
            id: 'c',
            method: 'POST',
            url: '$a/Lines',
            body: { Description: 'bad', QuantityOrdered: -1, UnitOfMeasure: 'EA', UnitPrice: 1 },
          },
        ],
        { method: 'GET', url: 'Parts/$count' },
      ]),
    );
    expect(response.status).toBe(200);
    const parts = answers(response.headers.get('content-type')!, await response.text());
    // the failed change set is one application/http part with the failing request's error; processing stops there
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ status: 400, id: 'c' });
    expect(parts[0]!.changeset).toBeUndefined();
    expect(JSON.parse(parts[0]!.body).error).toMatchObject({ code: 'InvalidBody', target: 'QuantityOrdered' });
    expect([await count('PurchaseOrders'), await count('POLineItems')]).toEqual([orders, lines]);
    expect(((await get(`PurchaseOrders?$filter=VendorID eq 'V-ROLLBACK'`))['value'] as Row[]).length).toBe(0);
  });

  it('goes on after a failure with Prefer: continue-on-error, and says so', async () => {
    const response = await post(
      multipart([
        { method: 'PATCH', url: "PurchaseOrders('NO-SUCH-PO')", body: { Notes: 'x' } },
        { method: 'GET', url: 'Parts/$count' },
      ]),
      { prefer: 'odata.continue-on-error' },
    );
    expect(response.headers.get('preference-applied')).toBe('continue-on-error=true');
    const parts = answers(response.headers.get('content-type')!, await response.text());
    expect(parts.map((p) => p.status)).toEqual([404, 200]);
  });

  it('runs a JSON batch: atomicity groups, dependsOn, references, 424 for what depends on a failure', async () => {
    const response = await json([
      { id: 'po', atomicityGroup: 'g1', method: 'post', url: 'PurchaseOrders', body: { VendorID: 'V-JSON' } },
      {
        id: 'line',
        atomicityGroup: 'g1',
        dependsOn: ['po'],
        method: 'post',
        url: '$po/Lines',
        body: { Description: 'Nuts', QuantityOrdered: 2, UnitOfMeasure: 'EA', UnitPrice: 1 },
      },
      { id: 'read', dependsOn: ['g1'], method: 'get', url: '$po?$expand=Lines($select=Description)' },
      { id: 'bad', atomicityGroup: 'g2', method: 'post', url: 'PurchaseOrders', body: { VendorID: 'V-JSON-2' } },
      { id: 'bad2', atomicityGroup: 'g2', method: 'patch', url: "PurchaseOrders('NO-SUCH')", body: { Notes: 'x' } },
      { id: 'after', dependsOn: ['g2'], method: 'get', url: 'Parts/$count' },
      { id: 'free', method: 'get', url: 'Parts/$count' },
      // a condition the service does not evaluate: not run (JSON Format §19.1)
      { id: 'cond', dependsOn: ['free'], if: '$free/$succeeded', method: 'get', url: 'Parts/$count' },
    ]);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const { responses } = (await response.json()) as { responses: Row[] };
    expect(responses.map((r) => [r['id'], r['status'], r['atomicityGroup']])).toEqual([
      ['po', 201, 'g1'],
      ['line', 201, 'g1'],
      ['read', 200, undefined],
      ['bad', 424, 'g2'],
      ['bad2', 404, 'g2'],
      ['after', 424, undefined],
      ['free', 200, undefined],
      ['cond', 424, undefined],
    ]);
    const read = responses[2]!['body'] as Row;
    expect((read['Lines'] as Row[]).map((l) => l['Description'])).toEqual(['Nuts']);
    expect(responses[6]!['body']).toBe(String(await count('Parts')));
    expect(((await get(`PurchaseOrders?$filter=VendorID eq 'V-JSON-2'`))['value'] as Row[]).length).toBe(0);
  });

  it('applies credentials and tenancy to every request: another site is not reachable through a batch', async () => {
    const response = await post(
      multipart([
        { method: 'GET', url: `/${s.otherSite}/ODataApi/v1/Parts?$top=1` },
        { method: 'GET', url: 'Parts/$count' },
      ]),
      { prefer: 'continue-on-error' },
    );
    const parts = answers(response.headers.get('content-type')!, await response.text());
    expect(parts.map((p) => p.status)).toEqual([401, 200]);
    // without credentials the batch itself is refused
    const anonymous = await fetch(`${s.root}/$batch`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/mixed; boundary=batch_1' },
      body: multipart([{ method: 'GET', url: 'Parts' }]),
    });
    expect(anonymous.status).toBe(401);
  });

  it('refuses a malformed batch with a 400 that says what is wrong, before running any of it', async () => {
    const before = await count('PurchaseOrders');
    const cases: [string, string, RegExp][] = [
      ['multipart/mixed', multipart([{ method: 'GET', url: 'Parts' }]), /without a boundary/],
      ['multipart/mixed; boundary=other', multipart([{ method: 'GET', url: 'Parts' }]), /does not match its boundary/],
      [
        'multipart/mixed; boundary=batch_1',
        multipart([
          [{ id: '1', method: 'POST', url: 'PurchaseOrders', body: { VendorID: 'V-NEVER' } }],
          [{ id: '2', method: 'GET', url: 'Parts' }],
        ]),
        /is a GET: a change set holds only changes/,
      ],
      [
        'multipart/mixed; boundary=batch_1',
        multipart([
          { id: '1', method: 'GET', url: 'Parts' },
          { id: '1', method: 'GET', url: 'Parts' },
        ]),
        /repeats the Content-ID "1"/,
      ],
      [
        'multipart/mixed; boundary=batch_1',
        '--batch_1\r\nContent-Type: application/http\r\n\r\nGET Parts HTTP/1.1\r\n',
        /ends without its closing line/,
      ],
      [
        'multipart/mixed; boundary=batch_1',
        '--batch_1\r\nContent-Type: text/plain\r\n\r\nhello\r\n--batch_1--',
        /a part is application\/http/,
      ],
    ];
    for (const [type, body, message] of cases) {
      const response = await post(body, { 'content-type': type });
      expect(response.status, type).toBe(400);
      const error = ((await response.json()) as { error: Row }).error;
      expect(error['code']).toBe('InvalidBatch');
      expect(String(error['message'])).toMatch(message);
    }
    expect(await count('PurchaseOrders')).toBe(before);
    const wrongType = await post('x', { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    const badJson = await json([{ id: '1', method: 'fetch', url: 'Parts' }]);
    expect(badJson.status).toBe(400);
    expect(((await badJson.json()) as { error: Row }).error).toMatchObject({
      code: 'InvalidBatch',
      target: 'requests[0].method',
    });
    const forward = await json([{ id: '1', method: 'get', url: 'Parts', dependsOn: ['2'] }]);
    expect(((await forward.json()) as { error: Row }).error['target']).toBe('requests[0].dependsOn');
    const nested = await post(multipart([{ method: 'POST', url: '$batch', body: {} }]));
    const nestedParts = answers(nested.headers.get('content-type')!, await nested.text());
    expect(nestedParts[0]!.status).toBe(400);
    expect((await fetch(`${s.root}/$batch`, { headers: { API_KEY: s.key } })).status).toBe(405);
  });

  it('keeps change sets flowing when more run at once than the store has connections', async () => {
    // (each request of a change set is resolved, credentials checked, before its transaction: a check that needs a
    // connection must not wait for one while transactions hold them all; it stalled for 2 s into 503s before)
    const until = Date.now() + 3000;
    const outcomes: number[][] = [];
    await Promise.all(
      Array.from({ length: 12 }, async (_, worker) => {
        for (let n = 0; Date.now() < until; n++) {
          const response = await post(
            multipart([
              [
                { id: '1', method: 'POST', url: 'PurchaseOrders', body: { VendorID: `V-FLOW-${worker}-${n}` } },
                {
                  id: '2',
                  method: 'POST',
                  url: '$1/Lines',
                  body: { Description: 'x', QuantityOrdered: 1, UnitOfMeasure: 'EA', UnitPrice: 1 },
                },
              ],
            ]),
          );
          const type = response.headers.get('content-type') ?? '';
          const text = await response.text();
          outcomes.push(
            type.startsWith('multipart/mixed')
              ? [response.status, ...answers(type, text).map((p) => p.status)]
              : [response.status],
          );
        }
      }),
    );
    expect(outcomes.length).toBeGreaterThan(12);
    expect(outcomes.filter((o) => o.join() !== '200,201,201')).toEqual([]);
  });

  it('refuses a batch of more requests than maxBatchRequests', async () => {
    const many = Array.from({ length: 1001 }, () => ({ method: 'GET', url: 'Parts/$count' }));
    const response = await post(multipart(many));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: Row }).error['code']).toBe('LimitExceeded');
  });
});
