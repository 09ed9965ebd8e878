// An SQL-injection corpus sent through every endpoint of the server over HTTP (raw bytes on a TCP socket), on SQLite
// and on the PostgreSQL server: the query options of every collection (entity sets and the collections under an
// entity), key predicates in paths (single and composite), navigation paths, the site segment, the API_KEY header,
// the Basic user name and password, every field of every write endpoint (POST and PATCH of the seven purchasing sets,
// POST MeterReadings), field names, and the parameters of AddComment and RemoveActualLabor.
//
// Checked on every answer: no 5xx; no stack trace, server path or database error text (the sign that the input
// reached the SQL) unless the request itself sent it; every error is OData JSON with a code of the service's catalog;
// no answer takes long enough to be a payload's sleep. Reads that quote a payload as a literal answer 200 with only
// rows that equal, contain, start or end with the payload (a wildcard or quote that escaped shows as extra rows).
// Data: the tables of every database (the directory's and both sites', read directly through the drivers) are the
// same after every refused request and after every read; an accepted write changed exactly its own row (and the
// tables it must touch: a sequence, a work order's LastModifiedDate, a meter's history) with the payload stored
// verbatim, and it reads back by its key. At the end every table of every site holds the rows it started with, plus
// exactly the accepted writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalog } from '../../src/errors.js';
import { plantDataModel } from '../../src/server/model.js';
import { startServer, storages, type RunningServer } from './harness.js';
import {
  answerProblems,
  databasesOf,
  describeExchange,
  exchange,
  requestBytes,
  sentForms,
  snapshot,
  snapshotDiff,
  type RawAnswer,
  type Snapshot,
} from './hostile-support.js';

const kinds = await storages();

/** Ideas from test/backends/sql/injection.test.ts, and more for paths, headers and bodies. */
const PAYLOADS: readonly string[] = [
  "' OR '1'='1",
  "' OR 1=1 --",
  "x' OR 1=1 --",
  "') OR ('1'='1",
  '\'; DROP TABLE "PurchaseOrders"; --',
  'x\'; DELETE FROM "Parts"; --',
  '"; DROP TABLE "Accounts"; --',
  '1; DROP TABLE odata_keys',
  '\'; UPDATE "PurchaseOrders" SET "Notes" = \'pwned\'; --',
  "'; INSERT INTO odata_keys VALUES ('x','y'); --",
  "' UNION SELECT * FROM odata_keys --",
  'x\' UNION SELECT "name", NULL FROM sqlite_master --',
  "' UNION SELECT table_name FROM information_schema.tables --",
  "'||(SELECT pg_sleep(6))||'",
  "'; SELECT pg_sleep(6); --",
  '1 AND (SELECT 1 FROM pg_sleep(6)) IS NOT NULL',
  "' AND randomblob(2000000000) --",
  "'; ATTACH DATABASE 'pwn.db' AS pwn; --",
  "'; COMMIT; DROP SCHEMA public CASCADE; --",
  '$1',
  '?',
  '$$; DROP TABLE x; $$',
  '\\\'; DROP TABLE "WorkOrders"; --',
  "\\' or 1 eq 1 --",
  'x\u02BC OR 1=1 --',
  'x\uFF07 OR 1=1 --',
  'x\uFF1B DROP TABLE "Parts"',
  '/**/OR/**/1=1',
  "x' /*",
  '*/ --',
  "O'Neil",
  "''",
  "'",
  '\\',
  '%',
  '_',
  '*',
  '[a]',
  'a%b_c\\',
  "a' COLLATE NOCASE --",
  "' || '",
  "'::text",
  "x' LIKE '%",
  '"',
  '`',
  "';--",
  "1' ORDER BY 1--",
  "' GROUP BY 1 HAVING 1=1 --",
  "pragma_table_info('Parts')",
  "x'\r\n; DROP TABLE x; --",
  "\u0000'; DROP TABLE x; --",
  `${'A'.repeat(3000)}' OR 1=1 --`,
];

/** Longest an answer may take: a payload's sleep (6 s) that ran would show. */
const SLOW_MS = 4000;
const CODES = new Set(Object.keys(errorCatalog));

const quoted = (v: string): string => `'${v.replace(/'/g, "''")}'`;

/** Percent-encodes what is not plain in a path segment or query value (UTF-8; `/` too). */
function pct(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~!$'()*,;:@]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Header value bytes (as a latin1 string) for text: its UTF-8. */
const headerText = (value: string): string => Buffer.from(value, 'utf8').toString('latin1');

type Json = null | boolean | number | string;
type Row = Record<string, unknown>;

/** Where a collection is read, and its text fields (for literals). */
interface Readable {
  readonly path: string;
  readonly fields: readonly string[];
}

function textFields(set: string): string[] {
  const type = plantDataModel.entitySets.get(set)!;
  return [...type.properties.values()].filter((p) => p.type === 'Edm.String').map((p) => p.name);
}

/** A create body per write endpoint and the text fields a payload goes into (rotating). */
interface WriteEndpoint {
  readonly name: string;
  readonly set: string;
  readonly base: (i: number) => Record<string, Json>;
  readonly fields: readonly string[];
  /** The other tables an accepted write may change. */
  readonly alsoTouches: readonly string[];
}

describe.each(kinds)('SQL injection through every endpoint over HTTP on %s', (storage) => {
  let s: RunningServer;
  let port: number;
  let databases: Awaited<ReturnType<typeof databasesOf>>;
  let initial: Snapshot;
  let current: Snapshot;
  /** Net rows added by accepted writes, by table (without the database prefix). */
  const added = new Map<string, number>();
  const writtenTables = new Set<string>();
  const statuses = new Map<number, number>();
  let requests = 0;
  let accepted = 0;
  let slowest = 0;
  let started = 0;
  const ids = {
    po: '',
    pr: '',
    bpo: '',
    wo: '',
    meter: '',
    poLine: ['', 0] as [string, number],
    prLine: ['', 0] as [string, number],
    bLine: ['', 0] as [string, number],
    labor: {} as Record<string, Json>,
  };
  let readables: Readable[] = [];

  beforeAll(async () => {
    started = performance.now();
    s = await startServer(storage);
    port = Number(new URL(s.origin).port);
    const first = async (path: string): Promise<Row> => {
      const response = await fetch(`${s.root}${path}`, { headers: { API_KEY: s.key } });
      expect(response.status, path).toBe(200);
      const [row] = ((await response.json()) as { value: Row[] }).value;
      expect(row, path).toBeDefined();
      return row!;
    };
    ids.po = String((await first('/PurchaseOrders?$top=1'))['PONumber']);
    ids.pr = String((await first('/PurchaseRequests?$top=1'))['PRNumber']);
    ids.bpo = String((await first('/BlanketPOs?$top=1'))['BlanketPONumber']);
    ids.meter = String((await first('/MeterReadings?$top=1'))['MeterID']);
    const poLine = await first('/POLineItems?$top=1');
    ids.poLine = [String(poLine['PONumber']), Number(poLine['LineNumber'])];
    const prLine = await first('/PRLineItems?$top=1');
    ids.prLine = [String(prLine['PRNumber']), Number(prLine['LineNumber'])];
    const bLine = await first('/BlanketPOLineItems?$top=1');
    ids.bLine = [String(bLine['BlanketPONumber']), Number(bLine['LineNumber'])];
    const labor = await first('/WorkOrders?$filter=ActualLabor/any()&$top=1');
    ids.wo = String(labor['WorkOrderID']);
    const record = await first(`/WorkOrders('${ids.wo}')/ActualLabor?$top=1`);
    ids.labor = {
      PeopleID: String(record['PeopleID']),
      Craft: String(record['Craft']),
      Hours: record['Hours'] as Json,
      StartDate: String(record['StartDate']),
    };
    readables = [...plantDataModel.entitySets.keys()].map((set) => ({ path: `/${set}`, fields: textFields(set) }));
    const contained = (path: string, set: string, fields?: string[]): Readable => ({
      path,
      fields: fields ?? textFields(set),
    });
    readables.push(
      contained(`/WorkOrders('${ids.wo}')/Comments`, 'WorkOrders', ['Comment', 'Username']),
      contained(`/WorkOrders('${ids.wo}')/ActualLabor`, 'WorkOrders', ['PeopleID', 'Craft']),
      contained(`/MeterReadings('${ids.meter}')/History`, 'MeterReadings'),
      contained(`/PurchaseOrders('${ids.po}')/Lines`, 'POLineItems'),
      contained(`/PurchaseOrders('${ids.po}')/Attachments`, 'POAttachments'),
      contained(`/PurchaseRequests('${ids.pr}')/Lines`, 'PRLineItems'),
      contained(`/BlanketPOs('${ids.bpo}')/Lines`, 'BlanketPOLineItems'),
    );
    databases = await databasesOf(s, [s.site, s.otherSite]);
    initial = await snapshot(databases);
    current = initial;
  }, 60_000);
  afterAll(async () => s?.close(), 30_000);

  // ── sending ────────────────────────────────────────────────────────────────

  interface Sent {
    readonly answer: RawAnswer;
    readonly json: unknown;
  }

  /** Sends one request (path under `/<site>/ODataApi/v1` unless `target` is absolute) and checks the answer. */
  async function send(
    method: string,
    target: string,
    options: { headers?: [string, string][]; body?: unknown; rawBody?: string; absolute?: boolean } = {},
  ): Promise<Sent> {
    const body =
      options.rawBody !== undefined
        ? Buffer.from(options.rawBody, 'utf8')
        : options.body === undefined
          ? undefined
          : Buffer.from(JSON.stringify(options.body), 'utf8');
    const headers: [string, string][] = [
      ['Host', `127.0.0.1:${port}`],
      ['Connection', 'close'],
      ...(options.headers ?? [['API_KEY', s.key]]),
      ...(body === undefined
        ? []
        : ([
            ['Content-Type', 'application/json'],
            ['Content-Length', String(body.length)],
          ] as [string, string][])),
    ];
    const path = options.absolute === true ? target : `/${s.site}/ODataApi/v1${target}`;
    const bytes = requestBytes(method, path, headers, body);
    const result = await exchange(port, bytes, { head: method === 'HEAD', timeoutMs: 30_000 });
    requests++;
    slowest = Math.max(slowest, result.ms);
    const what = `${method} ${path.slice(0, 300)}${body === undefined ? '' : ` ${body.toString('utf8').slice(0, 300)}`}`;
    expect(result.answer, `${what}\n→ ${describeExchange(result)}`).toBeDefined();
    const answer = result.answer!;
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    // a success may show what earlier requests stored (the payloads); an error may quote only its own request
    const quotable = answer.status < 300 ? [...sentForms(bytes), ...PAYLOADS] : sentForms(bytes);
    const problems = answerProblems(answer, quotable, method === 'HEAD');
    let json: unknown;
    try {
      json = JSON.parse(answer.body.toString('utf8'));
    } catch {
      json = undefined;
    }
    if (answer.status >= 400) {
      const code = (json as { error?: { code?: unknown } } | undefined)?.error?.code;
      if (typeof code !== 'string' || !CODES.has(code))
        problems.push(`error code ${String(code)} is not in the catalog`);
    }
    if (result.ms > SLOW_MS) problems.push(`took ${Math.round(result.ms)} ms`);
    expect(problems, `${what}\n→ ${describeExchange(result)}`).toEqual([]);
    return { answer, json };
  }

  /** Runs `work` over `items`, `width` at a time. */
  async function pool<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: width }, async () => {
        while (next < items.length) await work(items[next++]!);
      }),
    );
  }

  /** Nothing changed since the last accepted write. */
  async function unchanged(what: string): Promise<void> {
    const now = await snapshot(databases);
    expect(snapshotDiff(current, now), `${what} changed the data`).toEqual([]);
  }

  const rowsOf = (sent: Sent): Row[] => {
    const value = (sent.json as { value?: unknown } | undefined)?.value;
    expect(Array.isArray(value)).toBe(true);
    return value as Row[];
  };

  // ── reads ──────────────────────────────────────────────────────────────────

  it('query options of every collection: a quoted payload is a literal, anything else a clean refusal', async () => {
    type Read = {
      readonly payload: string;
      readonly readable: Readable;
      readonly field: string;
      readonly turn: number;
    };
    const reads: Read[] = [];
    PAYLOADS.forEach((payload, i) => {
      readables.forEach((readable, j) => {
        reads.push({ payload, readable, field: readable.fields[(i + j) % readable.fields.length]!, turn: i + j });
      });
    });
    /** Each (payload, collection) pair takes `n` of `items`, in turn: every item meets every payload and collection. */
    const some = <T>(items: readonly T[], turn: number, n: number): T[] =>
      Array.from({ length: n }, (_, k) => items[(turn * n + k) % items.length]!);
    await pool(reads, 6, async ({ payload: p, readable, field: f, turn }) => {
      const q = (query: string) => `${readable.path}?${query}`;
      const literal = pct(quoted(p));
      // quoted: a literal; the rows that come back really do match it
      const checks: [string, (v: string) => boolean][] = [
        [`$filter=${f}%20eq%20${literal}`, (v) => v === p],
        [`$filter=contains(${f},${literal})`, (v) => v.includes(p)],
        [
          `$filter=startswith(${f},${literal})%20or%20endswith(${f},${literal})`,
          (v) => v.startsWith(p) || v.endsWith(p),
        ],
        [`$filter=${f}%20in%20(${literal},'zz')`, (v) => v === p || v === 'zz'],
        [`$filter=${f}%20eq%20@a&@a=${literal}`, (v) => v === p],
        [`$filter=tolower(${f})%20eq%20tolower(${literal})`, (v) => v.toLowerCase() === p.toLowerCase()],
      ];
      for (const [query, holds] of some(checks, turn, 3)) {
        const sent = await send('GET', q(query));
        // a payload longer than the field, or with a NUL, may be refused as a literal; never run
        if (sent.answer.status !== 200) {
          expect(sent.answer.status, `${readable.path}?${query}`).toBe(400);
          continue;
        }
        for (const row of rowsOf(sent)) {
          const v = row[f];
          expect(
            typeof v === 'string' && holds(v),
            `${readable.path}?${query}: ${JSON.stringify(row).slice(0, 300)}`,
          ).toBe(true);
        }
      }
      const count = await send('GET', `${readable.path}/$count?$filter=${f}%20eq%20${literal}`);
      expect([200, 400, 404]).toContain(count.answer.status);
      // unquoted, or in the other options: refused or harmless
      const raw = pct(p);
      const unquoted = [
        `$filter=${f}%20eq%20'${raw}'`,
        `$filter=${raw}`,
        `$filter=${f}%20eq%20${raw}`,
        `$orderby=${raw}`,
        `$orderby=${f}%20${raw}`,
        `$select=${raw}`,
        `$select=${f},${raw}`,
        `$top=${raw}`,
        `$skip=${raw}`,
        `$count=${raw}`,
        `$search=${raw}`,
        `$expand=${raw}`,
        `${raw}=1`,
        `$filter=${f}%20eq%20@a&@a=${raw}`,
      ];
      for (const query of some(unquoted, turn, 3)) {
        const sent = await send('GET', q(query));
        expect([200, 400, 404, 501], `${readable.path}?${query}`).toContain(sent.answer.status);
      }
    });
    await unchanged('the reads');
  }, 600_000);

  it('key predicates (single and composite), navigation paths and set names', async () => {
    const singleKeys = [
      'Accounts',
      'Parts',
      'PurchaseRequests',
      'PurchaseOrders',
      'BlanketPOs',
      'WorkOrders',
      'MeterReadings',
    ];
    const composite: [string, string, [string, number]][] = [
      ['POLineItems', 'PONumber', ids.poLine],
      ['PRLineItems', 'PRNumber', ids.prLine],
      ['BlanketPOLineItems', 'BlanketPONumber', ids.bLine],
    ];
    const navigations: [string, string][] = [
      ['WorkOrders', 'Comments'],
      ['WorkOrders', 'ActualLabor'],
      ['PurchaseOrders', 'Lines'],
      ['PurchaseOrders', 'Attachments'],
      ['PurchaseRequests', 'Lines'],
      ['BlanketPOs', 'Lines'],
      ['MeterReadings', 'History'],
    ];
    await pool(PAYLOADS, 4, async (p) => {
      const literal = pct(quoted(p));
      const raw = pct(p);
      const expectStatus = async (path: string, allowed: number[], method = 'GET', body?: unknown) => {
        const sent = await send(method, path, body === undefined ? {} : { body });
        expect(allowed, `${method} ${path}`).toContain(sent.answer.status);
      };
      for (const set of singleKeys) {
        await expectStatus(`/${set}(${literal})`, [400, 404]);
        await expectStatus(`/${set}('${raw}')`, [400, 404]);
        await expectStatus(`/${set}(${raw})`, [400, 404]);
        await expectStatus(`/${set}(${literal})?$select=${raw}`, [400, 404]);
      }
      await expectStatus(`/POAttachments(${raw})`, [400, 404]);
      await expectStatus(`/POAttachments(${literal})`, [400]);
      for (const [set, header, [h, n]] of composite) {
        await expectStatus(`/${set}(${header}=${literal},LineNumber=1)`, [400, 404]);
        await expectStatus(`/${set}(${header}=${pct(quoted(h))},LineNumber=${raw})`, [400, 404]);
        await expectStatus(`/${set}(${header}=${pct(quoted(h))},LineNumber=${n},${raw}=1)`, [400, 404]);
        await expectStatus(`/${set}(${raw}=${pct(quoted(h))},LineNumber=${n})`, [400, 404]);
        await expectStatus(`/${set}(${literal},${n})`, [400, 404]);
      }
      for (const [set, nav] of navigations) {
        await expectStatus(`/${set}(${literal})/${nav}`, [400, 404]);
        await expectStatus(`/${set}(${literal})/${nav}?$filter=${raw}`, [400, 404]);
      }
      await expectStatus(`/WorkOrders('${ids.wo}')/${raw}`, [400, 404]);
      await expectStatus(`/PurchaseOrders('${ids.po}')/${raw}`, [400, 404]);
      await expectStatus(`/${raw}`, [400, 404]);
      await expectStatus(`/${raw}/$count`, [400, 404]);
      await expectStatus(`/${raw}('x')/Lines`, [400, 404]);
      // an action on a work order that is not there writes nothing
      await expectStatus(`/WorkOrders(${literal})/AddComment`, [400, 404], 'POST', { Comment: 'c', Username: 'u' });
      await expectStatus(`/WorkOrders(${literal})/RemoveActualLabor`, [400, 404], 'POST', ids.labor);
      await expectStatus(`/WorkOrders('${ids.wo}')/${raw}`, [400, 404, 405], 'POST', { Comment: 'c', Username: 'u' });
    });
    await unchanged('the key predicates and navigation paths');
  }, 600_000);

  it('the site segment, the API_KEY header and the Basic user name and password: 404 or 401, nothing read', async () => {
    const [keyId] = s.key.split('.');
    const basic = (user: string, password: string) =>
      `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
    await pool(PAYLOADS, 4, async (p) => {
      for (const method of ['GET', 'POST'] as const) {
        const body = method === 'POST' ? { VendorID: 'V' } : undefined;
        const site = await send(method, `/${pct(p)}/ODataApi/v1/PurchaseOrders`, {
          absolute: true,
          ...(body === undefined ? {} : { body }),
        });
        expect([400, 404], `site ${p}`).toContain(site.answer.status);
      }
      // a header carries no CR, LF or NUL: those payloads would be a broken request of our own making
      if (/[\r\n\u0000]/.test(p)) return;
      for (const headers of [
        [['API_KEY', headerText(p)]],
        [['API_KEY', headerText(`${keyId}.${p}`)]],
        [['API_KEY', headerText(`${p}.${s.key.split('.')[1]}`)]],
        [['Authorization', basic(p, s.user.password)]],
        [['Authorization', basic(s.user.name, p)]],
        [['Authorization', headerText(`Basic ${p}`)]],
      ] as [string, string][][]) {
        const sent = await send('GET', '/PurchaseOrders?$top=1', { headers });
        expect(sent.answer.status, `${JSON.stringify(headers)}`).toBe(401);
        expect(sent.answer.body.toString('utf8')).not.toContain(ids.po);
      }
    });
    await unchanged('the sites and credentials');
  }, 300_000);

  // ── writes ─────────────────────────────────────────────────────────────────

  const endpoints = (): WriteEndpoint[] => [
    {
      name: 'POST PurchaseRequests',
      set: 'PurchaseRequests',
      base: () => ({ RequestedBy: 'injection', Description: 'd' }),
      fields: [
        'RequestedBy',
        'Description',
        'Notes',
        'WorkOrderID',
        'Account',
        'SuggestedVendorID',
        'Status',
        'PRNumber',
      ],
      alsoTouches: ['odata_sequences'],
    },
    {
      name: 'POST PRLineItems',
      set: 'PRLineItems',
      base: () => ({ PRNumber: ids.pr, Description: 'd', Quantity: 1, UnitOfMeasure: 'EA' }),
      fields: ['Description', 'PartID', 'UnitOfMeasure', 'Account', 'WorkOrderID', 'Status', 'PRNumber'],
      alsoTouches: [],
    },
    {
      name: 'POST PurchaseOrders',
      set: 'PurchaseOrders',
      base: () => ({ VendorID: 'injection' }),
      fields: [
        'PONumber',
        'VendorID',
        'VendorName',
        'Buyer',
        'ShipTo',
        'PaymentTerms',
        'Currency',
        'PRNumber',
        'BlanketPONumber',
        'Account',
        'Notes',
      ],
      alsoTouches: ['odata_sequences'],
    },
    {
      name: 'POST POLineItems',
      set: 'POLineItems',
      base: () => ({ PONumber: ids.po, Description: 'd', QuantityOrdered: 1, UnitOfMeasure: 'EA', UnitPrice: 1 }),
      fields: ['Description', 'PartID', 'UnitOfMeasure', 'Account', 'WorkOrderID', 'PONumber'],
      alsoTouches: [],
    },
    {
      name: 'POST POAttachments',
      set: 'POAttachments',
      base: () => ({ PONumber: ids.po, FileName: 'a.txt', ContentType: 'text/plain', ContentBase64: 'aGk=' }),
      fields: ['FileName', 'ContentType', 'Description', 'DocumentType', 'ContentBase64', 'PONumber'],
      alsoTouches: [],
    },
    {
      name: 'POST BlanketPOs',
      set: 'BlanketPOs',
      base: (i) => ({ BlanketPONumber: `INJ-${i}`, VendorID: 'V', StartDate: '2024-01-01', LimitAmount: 1000 }),
      fields: ['BlanketPONumber', 'VendorID', 'Description', 'Buyer', 'PaymentTerms', 'Account', 'Currency', 'Status'],
      alsoTouches: [],
    },
    {
      name: 'POST BlanketPOLineItems',
      set: 'BlanketPOLineItems',
      base: () => ({ BlanketPONumber: ids.bpo, Description: 'd', UnitOfMeasure: 'EA', UnitPrice: 1 }),
      fields: ['Description', 'PartID', 'UnitOfMeasure', 'Account', 'BlanketPONumber'],
      alsoTouches: [],
    },
    {
      name: 'POST MeterReadings',
      set: 'MeterReadings',
      base: (i) => ({ MeterID: `INJ-M${i}`, MeterReading: 1 }),
      fields: ['MeterID', 'Description', 'Unit', 'Event', 'ReadingDate'],
      alsoTouches: ['MeterReadingHistory'],
    },
  ];

  /** The key of an existing entity of each purchasing set, and a text field a PATCH may change. */
  const patchTargets = (): { set: string; key: Record<string, Json>; path: string; fields: string[] }[] => [
    {
      set: 'PurchaseRequests',
      key: { PRNumber: ids.pr },
      path: `('${ids.pr}')`,
      fields: ['Description', 'Notes', 'RequestedBy', 'Account'],
    },
    {
      set: 'PRLineItems',
      key: { PRNumber: ids.prLine[0], LineNumber: ids.prLine[1] },
      path: `(PRNumber='${ids.prLine[0]}',LineNumber=${ids.prLine[1]})`,
      fields: ['Description', 'PartID', 'WorkOrderID'],
    },
    {
      set: 'PurchaseOrders',
      key: { PONumber: ids.po },
      path: `('${ids.po}')`,
      fields: ['Notes', 'VendorName', 'Buyer', 'ShipTo'],
    },
    {
      set: 'POLineItems',
      key: { PONumber: ids.poLine[0], LineNumber: ids.poLine[1] },
      path: `(PONumber='${ids.poLine[0]}',LineNumber=${ids.poLine[1]})`,
      fields: ['Description', 'PartID', 'Account'],
    },
    {
      set: 'BlanketPOs',
      key: { BlanketPONumber: ids.bpo },
      path: `('${ids.bpo}')`,
      fields: ['Description', 'Buyer', 'PaymentTerms'],
    },
    {
      set: 'BlanketPOLineItems',
      key: { BlanketPONumber: ids.bLine[0], LineNumber: ids.bLine[1] },
      path: `(BlanketPONumber='${ids.bLine[0]}',LineNumber=${ids.bLine[1]})`,
      fields: ['Description', 'PartID'],
    },
  ];

  const tableOf = (key: string): string => key.slice(key.lastIndexOf('.') + 1);

  /**
   * After a request that may have written: a refusal changed nothing; an acceptance changed only `tables`, with
   * `rows` new rows in `table` (and as many gone: an update) holding `field` = `payload` verbatim.
   */
  async function afterWrite(
    what: string,
    status: number,
    expected: {
      table: string;
      added: number;
      removed: number;
      field: string;
      payload: string;
      alsoTouches: readonly string[];
    },
  ): Promise<void> {
    const now = await snapshot(databases);
    if (status >= 300) {
      expect(snapshotDiff(current, now), `${what} was refused (${status}) but changed the data`).toEqual([]);
      return;
    }
    accepted++;
    const allowed = new Set([expected.table, ...expected.alsoTouches]);
    for (const key of new Set([...current.keys(), ...now.keys()])) {
      const before = current.get(key) ?? [];
      const after = now.get(key) ?? [];
      const inBefore = new Set(before);
      const inAfter = new Set(after);
      const gone = before.filter((r) => !inAfter.has(r));
      const fresh = after.filter((r) => !inBefore.has(r));
      if (gone.length === 0 && fresh.length === 0) continue;
      const table = tableOf(key);
      expect(allowed.has(table), `${what} changed ${key}: ${snapshotDiff(current, now).join('\n')}`).toBe(true);
      if (key.startsWith('directory.') || key.includes(s.otherSite))
        throw new Error(`${what} changed ${key}, outside the site written to`);
      if (storage === 'postgres') {
        const own = JSON.stringify(['site', s.site]);
        const stray = [...gone, ...fresh].filter((r) => !r.includes(own));
        expect(stray, `${what} changed rows of another site in ${key}`).toEqual([]);
      }
      if (table === expected.table) {
        expect([fresh.length, gone.length], `${what}: rows added and removed in ${key}`).toEqual([
          expected.added,
          expected.removed,
        ]);
        const cell = JSON.stringify([expected.field, expected.payload]);
        expect(
          fresh.some((r) => r.includes(cell)),
          `${what}: ${cell} is not stored verbatim in ${fresh[0]?.slice(0, 400)}`,
        ).toBe(true);
      }
      writtenTables.add(table);
      added.set(table, (added.get(table) ?? 0) + fresh.length - gone.length);
    }
    current = now;
  }

  it('body fields and field names of every write endpoint: stored verbatim or refused, nothing else changed', async () => {
    for (const [i, p] of PAYLOADS.entries()) {
      // (PATCHes first: a create below may make the payload a key that exists)
      for (const t of patchTargets()) {
        const field = t.fields[i % t.fields.length]!;
        // by the collection path, the key in the body
        const byBody = await send('PATCH', `/${t.set}`, { body: { ...t.key, [field]: p } });
        expect([200, 400], `PATCH ${t.set} ${field}`).toContain(byBody.answer.status);
        await afterWrite(`PATCH ${t.set} ${field} = ${JSON.stringify(p)}`, byBody.answer.status, {
          table: t.set,
          added: 1,
          removed: 1,
          field,
          payload: p,
          alsoTouches: [],
        });
        // a key that is the payload finds nothing
        const keyName = Object.keys(t.key)[0]!;
        const missing = await send('PATCH', `/${t.set}`, { body: { ...t.key, [keyName]: p, [field]: 'x' } });
        expect([400, 404], `PATCH ${t.set} ${keyName} = payload`).toContain(missing.answer.status);
        await afterWrite(`PATCH ${t.set} with ${keyName} = ${JSON.stringify(p)}`, missing.answer.status, {
          table: t.set,
          added: 0,
          removed: 0,
          field,
          payload: p,
          alsoTouches: [],
        });
        // by the key path
        const byPath = await send('PATCH', `/${t.set}${t.path}`, { body: { [field]: `${p}!` } });
        expect([200, 400], `PATCH ${t.set}${t.path} ${field}`).toContain(byPath.answer.status);
        await afterWrite(`PATCH ${t.set}${t.path} ${field} = ${JSON.stringify(`${p}!`)}`, byPath.answer.status, {
          table: t.set,
          added: 1,
          removed: 1,
          field,
          payload: `${p}!`,
          alsoTouches: [],
        });
      }
      for (const e of endpoints()) {
        const field = e.fields[i % e.fields.length]!;
        const body = { ...e.base(i), [field]: p };
        const sent = await send('POST', `/${e.set}`, { body });
        expect([201, 400, 404, 409, 413], `${e.name} ${field}=${JSON.stringify(p)}`).toContain(sent.answer.status);
        await afterWrite(`${e.name} with ${field} = ${JSON.stringify(p)}`, sent.answer.status, {
          table: e.set,
          added: 1,
          removed: 0,
          field,
          payload: p,
          alsoTouches: e.alsoTouches,
        });
        if (sent.answer.status === 201) {
          // it reads back by the key the server gives in Location (the key escaped in a path)
          const location = (sent.answer.headers.get('location') ?? [])[0] ?? '';
          const path = location.slice(location.indexOf('/ODataApi/v1') + '/ODataApi/v1'.length);
          const back = await send('GET', path);
          expect(back.answer.status, `GET ${location}`).toBe(200);
          if (field !== 'ContentBase64') expect((back.json as Row)[field], `GET ${location}`).toBe(p);
        }
        // the payload as a field name
        const named = await send('POST', `/${e.set}`, { body: { ...e.base(i), [p]: 'x' } });
        expect(named.answer.status, `${e.name} with a field named ${JSON.stringify(p)}`).toBe(400);
        await afterWrite(`${e.name} with a field named ${JSON.stringify(p)}`, named.answer.status, {
          table: e.set,
          added: 0,
          removed: 0,
          field: '',
          payload: p,
          alsoTouches: [],
        });
      }
      // the attachment PATCH by its GUID key
      const attachments = rowsOf(await send('GET', `/POAttachments?$top=1&$orderby=AttachmentID`));
      const attachment = String(attachments[0]!['AttachmentID']);
      const patched = await send('PATCH', `/POAttachments(${attachment})`, { body: { Description: p } });
      expect([200, 400]).toContain(patched.answer.status);
      await afterWrite(`PATCH POAttachments Description = ${JSON.stringify(p)}`, patched.answer.status, {
        table: 'POAttachments',
        added: 1,
        removed: 1,
        field: 'Description',
        payload: p,
        alsoTouches: [],
      });
    }
  }, 900_000);

  it('action parameters: AddComment stores the payload verbatim, RemoveActualLabor finds nothing to remove', async () => {
    for (const p of PAYLOADS) {
      for (const field of ['Comment', 'Username'] as const) {
        const body = { Comment: 'comment', Username: 'user', [field]: p };
        const sent = await send('POST', `/WorkOrders('${ids.wo}')/AddComment`, { body });
        expect([200, 400], `AddComment ${field}`).toContain(sent.answer.status);
        await afterWrite(`AddComment ${field} = ${JSON.stringify(p)}`, sent.answer.status, {
          table: 'WorkOrderComments',
          added: 1,
          removed: 0,
          field,
          payload: p,
          alsoTouches: ['WorkOrders'],
        });
      }
      for (const field of ['PeopleID', 'Craft', 'StartDate', 'Hours', 'OTHours'] as const) {
        const sent = await send('POST', `/WorkOrders('${ids.wo}')/RemoveActualLabor`, {
          body: { ...ids.labor, [field]: p },
        });
        expect([400, 404], `RemoveActualLabor ${field}`).toContain(sent.answer.status);
        await afterWrite(`RemoveActualLabor ${field} = ${JSON.stringify(p)}`, sent.answer.status, {
          table: 'ActualLabor',
          added: 0,
          removed: 1,
          field,
          payload: p,
          alsoTouches: ['WorkOrders'],
        });
      }
      // the payload as the whole body's text
      const whole = await send('POST', `/WorkOrders('${ids.wo}')/AddComment`, { rawBody: p });
      expect([400], 'AddComment with the payload as the body').toContain(whole.answer.status);
      await afterWrite('AddComment with the payload as the body', whole.answer.status, {
        table: 'WorkOrderComments',
        added: 0,
        removed: 0,
        field: '',
        payload: p,
        alsoTouches: [],
      });
    }
  }, 300_000);

  it('leaves every table of every site as it was, but for the accepted writes', async () => {
    const final = await snapshot(databases);
    expect([...final.keys()].sort(), 'the tables').toEqual([...initial.keys()].sort());
    const other = JSON.stringify(['site', s.otherSite]);
    for (const [key, rows] of initial) {
      const table = tableOf(key);
      // on PostgreSQL the other site's rows share the tables: they are all still there, unchanged
      if (storage === 'postgres')
        expect(
          final.get(key)!.filter((r) => r.includes(other)),
          `the other site's rows of ${key}`,
        ).toEqual(rows.filter((r) => r.includes(other)));
      const after = final.get(key)!;
      const delta = key.startsWith('directory.') || key.includes(s.otherSite) ? 0 : (added.get(table) ?? 0);
      expect(after.length, `rows of ${key}`).toBe(rows.length + delta);
      if (!writtenTables.has(table) || key.startsWith('directory.') || key.includes(s.otherSite))
        expect(after, `contents of ${key}`).toEqual(rows);
    }
    // and the corpus did go through: requests, refusals and accepted writes
    const seconds = (performance.now() - started) / 1000;
    const shown = [...statuses].sort(([a], [b]) => a - b).map(([k, v]) => `${k}:${v}`);
    console.info(
      `injection ${storage}: ${PAYLOADS.length} payloads, ${requests} requests, ${accepted} accepted writes, ` +
        `slowest ${Math.round(slowest)} ms, ${seconds.toFixed(1)} s; statuses ${shown.join(' ')}`,
    );
    expect(accepted).toBeGreaterThan(PAYLOADS.length * 5);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(PAYLOADS.length * 10);
    expect(statuses.get(401) ?? 0).toBeGreaterThan(PAYLOADS.length * 3);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(PAYLOADS.length * 10);
  });
});
