// Hostile input as a property: fast-check generates raw HTTP requests, sent byte for byte over a TCP socket (node:net,
// so that nothing cleans them up on the way) to a server on SQLite and on the PostgreSQL server: odd and garbage
// methods; paths mixing real sites, sets and keys with random segments, percent-encodings (%00, %C0%AF, overlong and
// invalid UTF-8, lone surrogates, malformed %), `..`, very long segments and random query options; valid and invalid
// credentials, duplicate and huge headers, odd content types; bodies aimed at every write endpoint (POST and PATCH of
// the seven purchasing sets, POST MeterReadings, AddComment, RemoveActualLabor) that are truncated, deeply nested,
// huge (1e400, 100 digits, 10 MB strings), of the wrong type, with NUL or invalid UTF-8 bytes, duplicate or
// prototype-polluting keys (`__proto__`, `constructor`, `prototype`), or not objects; and broken framing (a body
// shorter or longer than its Content-Length, a huge or malformed Content-Length, chunked bodies).
//
// Properties, after every request:
// - there is an answer, and it is no 5xx (a 501 NotImplemented, OData's answer for a valid option the service does
//   not offer, aside), and a 2xx or 4xx;
// - no stack frame, file path, JavaScript error name or database error text appears in it unless the request sent it
//   (or, in a success, an accepted write stored it);
// - every error is OData JSON, `{"error":{"code","message",...}}` with a JSON content type; a 401 says
//   WWW-Authenticate, a 405 says Allow;
// - the server keeps answering: a valid GET right after answers 200;
// - a request that did not succeed as a write changed no row of any table of any database (the directory's and both
//   sites', read directly through the drivers);
// - Object.prototype and the other built-in prototypes of this process (the server runs in it) are unchanged.
// A fixed corpus of the named hostile requests runs first, each once, so that every kind is tried on every run.
//
// HOSTILE_RUNS (default 400) sets the number of fast-check runs per storage (1 to 4 requests each).
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitySetNames } from '../../src/server/model.js';
import { startServer, storages, type RunningServer } from './harness.js';
import {
  answerProblems,
  databasesOf,
  describeExchange,
  exchange,
  inheritedPollution,
  prototypeNames,
  requestBytes,
  rowCount,
  sentForms,
  simpleRequest,
  snapshot,
  snapshotDiff,
  type Snapshot,
} from './hostile-support.js';

const kinds = await storages();

const RUNS = (() => {
  const n = Number(process.env.HOSTILE_RUNS ?? '400');
  return Number.isInteger(n) && n > 0 ? n : 400;
})();
/** How much longer than the default run the test may take. */
const SCALE = Math.max(1, RUNS / 400);

// ── raw pieces ───────────────────────────────────────────────────────────────

/** JSON text (or not quite), built when the request is sent: a 10 MB value is a size here, not a string. */
type Raw =
  | { readonly text: string }
  | { readonly bytes: readonly number[]; readonly before?: string; readonly after?: string }
  | { readonly head: string; readonly unit: string; readonly times: number; readonly tail: string };

const text = (t: string): Raw => ({ text: t });
const bytesIn = (before: string, bytes: readonly number[], after: string): Raw => ({ bytes, before, after });
const repeat = (head: string, unit: string, times: number, tail = ''): Raw => ({ head, unit, times, tail });

function render(raw: Raw): Buffer {
  if ('text' in raw) return Buffer.from(raw.text, 'utf8');
  if ('bytes' in raw)
    return Buffer.concat([Buffer.from(raw.before ?? '', 'utf8'), Buffer.from(raw.bytes), Buffer.from(raw.after ?? '')]);
  return Buffer.concat([
    Buffer.from(raw.head, 'utf8'),
    Buffer.from(raw.unit.repeat(raw.times), 'utf8'),
    Buffer.from(raw.tail),
  ]);
}

const HUNDRED_K = 100_000;
const TEN_MB = 10 * 1024 * 1024;

/** Values put where a field's value goes. */
const HOSTILE_VALUES: readonly Raw[] = [
  text('1e400'),
  text('-1e400'),
  text('1e-400'),
  text(`1${'0'.repeat(99)}`),
  text(`-${'9'.repeat(100)}`),
  text(`0.${'0'.repeat(400)}1`),
  text('123456789012345678901234567890.123456789'),
  text('9007199254740993'),
  text('NaN'),
  text('Infinity'),
  text('-0'),
  text('0x10'),
  text('01'),
  text('.5'),
  text('+1'),
  text('1.'),
  text('"1e400"'),
  text(`"${'9'.repeat(100)}"`),
  text('true'),
  text('null'),
  text('{}'),
  text('[]'),
  text('[1,"a",null]'),
  text('{"__proto__":{"polluted":"yes"}}'),
  text('{"constructor":{"prototype":{"polluted":"yes"}}}'),
  text('"\\u0000"'),
  text('"a\\u0000b"'),
  text('"\\ud800"'),
  text('"x\\udc00y"'),
  text('"\\'),
  text("'single'"),
  text('undefined'),
  text('"<script>alert(1)</script>"'),
  text('"${7*7}{{7*7}}"'),
  text('"\\n\\r\\t\\b\\f"'),
  text('"    "'),
  text('""'),
  bytesIn('"a', [0x00], 'b"'),
  bytesIn('"', [0xff, 0xfe], '"'),
  bytesIn('"', [0xc0, 0xaf], '"'),
  bytesIn('"', [0xe0, 0x80, 0xaf], '"'),
  bytesIn('"', [0xed, 0xa0, 0x80], '"'),
  bytesIn('"', [0xe2, 0x82], '"'),
  bytesIn('"', [0xf8, 0x88, 0x80, 0x80, 0x80], '"'),
  bytesIn('', [0x00], ''),
  repeat('', '[', HUNDRED_K),
  repeat('', '[', HUNDRED_K, ']'.repeat(HUNDRED_K)),
  repeat('', '{"a":', HUNDRED_K / 2, `1${'}'.repeat(HUNDRED_K / 2)}`),
  repeat('"', 'x', TEN_MB, '"'),
  repeat('"', 'é', 1024 * 1024, '"'),
  repeat('"', '\\u0000', 1000, '"'),
];

/** Whole bodies that are not the object. */
const HOSTILE_BODIES: readonly Raw[] = [
  text(''),
  text(' '),
  text('null'),
  text('true'),
  text('0'),
  text('"text"'),
  text('[]'),
  text('[{}]'),
  text('{'),
  text('}'),
  text('{"a":}'),
  text('{"a":1,}'),
  text("{'a':1}"),
  text('{"a":1}{"b":2}'),
  text('/* comment */ {}'),
  text('{"__proto__":{"polluted":"yes"}}'),
  text('{"constructor":{"prototype":{"polluted":"yes"}}}'),
  text('{"__proto__":null}'),
  text('{"prototype":{"polluted":"yes"}}'),
  text('[{"__proto__":{"polluted":"yes"}}]'),
  bytesIn('', [0xef, 0xbb, 0xbf], '{}'),
  bytesIn('', [0xff, 0xfe], '{}'),
  bytesIn('{"a":"', [0x80], '"}'),
  bytesIn('', [0x00, 0x00, 0x00, 0x00], ''),
  repeat('', '[', HUNDRED_K),
  repeat('', '[', HUNDRED_K, ']'.repeat(HUNDRED_K)),
  repeat('', '{"a":', HUNDRED_K, ''),
  repeat('{', '"k":1,', 50_000, '"z":1}'),
  repeat('"', 'x', TEN_MB, '"'),
];

/** Member names with a history. */
const HOSTILE_NAMES: readonly string[] = [
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'toString',
  'valueOf',
  'toJSON',
  '__defineGetter__',
  'isPrototypeOf',
  '@odata.type',
  '@odata.context',
  'Notes@odata.type',
  'Description@Core.Description',
  '',
  ' ',
  '\u0000',
  '\ud800',
  'a'.repeat(5000),
  'VendorID ',
  'vendorid',
  'PONumber\u0000',
];

/** Inserted into paths and query strings as they are, not encoded again. */
const PATH_FRAGMENTS: readonly string[] = [
  '%00',
  '%C0%AF',
  '%c0%ae%c0%ae',
  '%E0%80%AF',
  '%F0%80%80%AF',
  '%ED%A0%80',
  '%FF',
  '%FE%FF',
  '%',
  '%G1',
  '%2',
  '%2F',
  '%252F',
  '%5C',
  '%27',
  '%28',
  '%29',
  '%24',
  '%23',
  '%3F',
  '%20',
  '%0D%0A',
  '..',
  '.',
  '%2E%2E',
  '/..',
  '/../..',
  '//',
  '\\',
  ';',
  "'",
  "''",
  '(',
  ')',
  '$',
  '?',
  '#',
  '&',
  '=',
  '+',
  '*',
  '@',
  '~',
  '\u00e9',
  '\u00ff',
  '\u0080',
  '\u0000',
  '\u0001',
  '\u007f',
  ' ',
  '\t',
];

const ENTITY_SETS = entitySetNames;
const WRITE_SETS = [
  'PurchaseRequests',
  'PRLineItems',
  'PurchaseOrders',
  'POLineItems',
  'POAttachments',
  'BlanketPOs',
  'BlanketPOLineItems',
] as const;
type WriteSet = (typeof WRITE_SETS)[number];

const FIELDS: Readonly<Record<string, readonly string[]>> = {
  Accounts: ['Account', 'Description', 'IsActive'],
  Parts: ['PartID', 'Description', 'UnitCost', 'QuantityOnHand', 'IsCritical', 'CreatedDate'],
  PurchaseRequests: ['PRNumber', 'Description', 'Status', 'Priority', 'RequestedDate'],
  PRLineItems: ['PRNumber', 'LineNumber', 'Quantity', 'ExtendedCost'],
  PurchaseOrders: ['PONumber', 'VendorID', 'Status', 'FreightAmount', 'OrderDate', 'Notes'],
  POLineItems: ['PONumber', 'LineNumber', 'UnitPrice', 'ExtendedPrice', 'DueDate'],
  POAttachments: ['AttachmentID', 'PONumber', 'FileName', 'SizeBytes', 'ContentBase64'],
  BlanketPOs: ['BlanketPONumber', 'StartDate', 'EndDate', 'LimitAmount'],
  BlanketPOLineItems: ['BlanketPONumber', 'LineNumber', 'UnitPrice', 'IsActive'],
  WorkOrders: ['WorkOrderID', 'Status', 'Priority', 'ActualHours', 'IsOpen', 'RequestedDate'],
  MeterReadings: ['MeterID', 'MeterReading', 'ReadingDate', 'Unit'],
};

const NAVIGATIONS = [
  'Lines',
  'Attachments',
  'Comments',
  'ActualLabor',
  'History',
  'AddComment',
  'RemoveActualLabor',
  'PlantData.AddComment',
  '$count',
  '$value',
  '$ref',
  'Comments/$count',
  'Lines(1)',
];

const QUERY_NAMES = [
  '$filter',
  '$select',
  '$orderby',
  '$top',
  '$skip',
  '$count',
  '$expand',
  '$search',
  '$format',
  '$apply',
  '$compute',
  '$skiptoken',
  '$levels',
  '$id',
  '$foo',
  '$',
  'filter',
  '%24filter',
  '$FILTER',
  '$filter ',
  '$filter[]',
  '__proto__',
  '',
];

const QUERY_VALUES = [
  'true',
  "Account eq '1'",
  'IsActive eq true',
  "startswith(Description,'a')",
  "contains(Description,'%25')",
  'UnitCost gt 1e400',
  `UnitCost eq 1${'0'.repeat(200)}`,
  '(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((true',
  `${'('.repeat(3000)}true${')'.repeat(3000)}`,
  `${'not '.repeat(1000)}true`,
  Array.from({ length: 300 }, () => 'IsActive eq true').join(' or '),
  `Account in (${Array.from({ length: 1200 }, (_, i) => `'${i}'`).join(',')})`,
  "Description eq 'O''Neil'",
  "Description eq 'unterminated",
  "Description eq '\u0000'",
  'RequestedDate lt 0000-01-01T00:00:00Z',
  'RequestedDate gt 9999-12-31T23:59:59.9999999Z',
  'Comments/any(c:c/Comment eq null)',
  "matchesPattern(Description,'(a+)+$')",
  'length(Description) div 0 eq 1',
  'UnitCost mod 0 eq 1',
  'cast(UnitCost,Edm.Int64) eq 1',
  'Account,Description',
  'Account desc,Description asc',
  '*',
  'Lines',
  '-1',
  '0',
  '1',
  '10000',
  '10001',
  '99999999999999999999999',
  '1.5',
  '1e3',
  'NaN',
  'null',
  'maybe',
  'json',
  'xml',
  'application/json;odata.metadata=full',
  'Account eq @p',
  '$it',
  '$root/Parts',
  '@a',
];

const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS', 'HEAD'] as const;
const ODD_METHODS = [
  'FOO',
  'get',
  'Post',
  'PROPFIND',
  'MKCOL',
  'TRACE',
  'PURGE',
  'QUERY',
  'SEARCH',
  'M-SEARCH',
  'CONNECT',
  'PRI',
  'GET\u0000',
  'G\u00c9T',
  '',
  'X'.repeat(300),
];

const CONTENT_TYPES = [
  'application/json',
  'application/json;charset=utf-8',
  'application/json; charset=UTF-8',
  'APPLICATION/JSON',
  'application/json;odata.metadata=minimal;IEEE754Compatible=true',
  'application/json;charset=latin1',
  'application/json-patch+json',
  'application/jsonx',
  'text/plain',
  'text/json',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded',
  '*/*',
  '',
  ' ',
  ';',
  'a/b/c',
  'application/json, text/plain',
  'application/json;;;',
  '\u00ff/\u00ff',
  `application/json;${'x'.repeat(3000)}`,
];

const EXTRA_HEADERS: readonly (readonly [string, string])[] = [
  ['Accept', 'application/json'],
  ['Accept', 'application/json;odata.metadata=full;IEEE754Compatible=true'],
  ['Accept', 'application/xml'],
  ['Accept', 'text/html'],
  ['Accept', ';;;'],
  ['Accept', '\u00ff'],
  ['Prefer', 'return=minimal'],
  ['Prefer', 'return=representation'],
  ['Prefer', 'odata.maxpagesize=0'],
  ['Prefer', 'odata.maxpagesize=-1'],
  ['Prefer', '\u00ff;;='],
  ['OData-Version', '9.9'],
  ['OData-MaxVersion', '0'],
  ['If-Match', '*'],
  ['If-None-Match', 'W/"x"'],
  ['X-HTTP-Method-Override', 'DELETE'],
  ['X-HTTP-Method', 'PUT'],
  ['X-Forwarded-Proto', 'https'],
  ['X-Forwarded-Proto', 'gopher'],
  ['X-Forwarded-Host', 'evil.example'],
  ['X-Forwarded-For', '1.2.3.4, <script>'],
  ['X-Request-Id', 'x'.repeat(300)],
  ['X-Request-Id', '\u00ff\u00fe'],
  ['X-Request-Id', 'abc'],
  ['Content-Encoding', 'gzip'],
  ['Content-Encoding', 'br'],
  ['Expect', '100-continue'],
  ['Expect', 'foo'],
  ['Range', 'bytes=0-1'],
  ['Cookie', 'a=b; __proto__=x'],
  ['Origin', 'null'],
  ['Authorization', 'Bearer x'],
  ['Transfer-Encoding', 'identity'],
  ['__proto__', 'polluted'],
  ['constructor', 'x'],
  ['X-Latin1', '\u00e9\u00ff\u0080'],
  ['X-Empty', ''],
];

// ── generated requests ───────────────────────────────────────────────────────

type Cred =
  | 'key'
  | 'basic'
  | 'otherKey'
  | 'otherBasic'
  | 'none'
  | 'garbageKey'
  | 'emptyKey'
  | 'latin1Key'
  | 'nulKey'
  | 'hugeKey'
  | 'dupKeys'
  | 'dupKeyThenBad'
  | 'dupBadThenKey'
  | 'badBasic'
  | 'basicInvalidUtf8'
  | 'basicNoColon'
  | 'bearer'
  | 'keyAndBadBasic'
  | 'dashName';

const credArb: fc.Arbitrary<Cred> = fc.oneof(
  { weight: 30, arbitrary: fc.constant<Cred>('key') },
  { weight: 6, arbitrary: fc.constant<Cred>('basic') },
  {
    weight: 10,
    arbitrary: fc.constantFrom<Cred>(
      'otherKey',
      'otherBasic',
      'none',
      'garbageKey',
      'emptyKey',
      'latin1Key',
      'nulKey',
      'hugeKey',
      'dupKeys',
      'dupKeyThenBad',
      'dupBadThenKey',
      'badBasic',
      'basicInvalidUtf8',
      'basicNoColon',
      'bearer',
      'keyAndBadBasic',
      'dashName',
    ),
  },
);

type Framing = 'length' | 'chunked' | 'none' | 'short' | 'long' | 'huge' | 'badLength' | 'lengthAndChunked';

const framingArb: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 30, arbitrary: fc.constant<Framing>('length') },
  { weight: 3, arbitrary: fc.constant<Framing>('chunked') },
  {
    weight: 5,
    arbitrary: fc.constantFrom<Framing>('none', 'short', 'long', 'huge', 'badLength', 'lengthAndChunked'),
  },
);

type Host = 'normal' | 'missing' | 'garbage' | 'duplicate' | 'empty';
const hostArb: fc.Arbitrary<Host> = fc.oneof(
  { weight: 40, arbitrary: fc.constant<Host>('normal') },
  { weight: 2, arbitrary: fc.constantFrom<Host>('missing', 'garbage', 'duplicate', 'empty') },
);

type Mutation =
  | { readonly m: 'none' }
  | { readonly m: 'truncate'; readonly at: number }
  | { readonly m: 'replace'; readonly field: number; readonly value: Raw }
  | { readonly m: 'member'; readonly name: string; readonly value: Raw }
  | { readonly m: 'duplicate'; readonly field: number; readonly value: Raw }
  | { readonly m: 'whole'; readonly body: Raw }
  | {
      readonly m: 'wrap';
      readonly how: 'array' | 'twice' | 'bom' | 'trailing' | 'comment' | 'trailingComma' | 'nested';
    };

type Json = null | boolean | number | string | readonly Json[] | { readonly [k: string]: Json };

interface BodySpec {
  readonly fields: readonly (readonly [string, Json])[];
  readonly mutation: Mutation;
}

interface CaseSpec {
  /** What the request aims at, for messages. */
  readonly aim: string;
  readonly method: string;
  readonly target: string;
  readonly version: string;
  readonly host: Host;
  readonly cred: Cred;
  readonly contentTypes: readonly string[];
  readonly extra: readonly (readonly [string, string])[];
  readonly body: BodySpec | undefined;
  readonly framing: Framing;
  /** Bytes sent after the request on the same connection (a second, pipelined request). */
  readonly trailing?: string;
}

interface World {
  readonly port: number;
  readonly site: string;
  readonly otherSite: string;
  readonly key: string;
  readonly otherKey: string;
  readonly basic: string;
  readonly otherBasic: string;
  readonly purchaseOrders: readonly string[];
  readonly purchaseRequests: readonly string[];
  readonly blanketPOs: readonly string[];
  readonly poLines: readonly (readonly [string, number])[];
  readonly prLines: readonly (readonly [string, number])[];
  readonly blanketLines: readonly (readonly [string, number])[];
  readonly attachments: readonly string[];
  readonly workOrders: readonly string[];
  readonly meters: readonly string[];
  readonly parts: readonly string[];
  readonly accounts: readonly string[];
  /** RemoveActualLabor bodies that match a labor record (the first use removes it). */
  readonly labor: readonly { readonly workOrder: string; readonly body: Readonly<Record<string, Json>> }[];
}

const safeText = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 ]{0,18}$/);
const pickFrom = <T>(items: readonly T[]): fc.Arbitrary<T> => fc.nat(items.length - 1).map((i) => items[i]!);

/** Percent-encodes what is not plain in a URL (UTF-8; lone surrogates become U+FFFD). */
function pct(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~!$'()*,;:@/]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const quoted = (v: string): string => `'${v.replace(/'/g, "''")}'`;

const hostileValueArb: fc.Arbitrary<Raw> = fc.oneof(
  { weight: 6, arbitrary: pickFrom(HOSTILE_VALUES) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => text(JSON.stringify(v) ?? 'null')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map((s) => text(JSON.stringify(s))) },
);

const mutationArb = (fieldCount: number): fc.Arbitrary<Mutation> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant<Mutation>({ m: 'none' }) },
    { weight: 3, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }).map((at): Mutation => ({ m: 'truncate', at })) },
    {
      weight: 10,
      arbitrary: fc
        .record({ field: fc.nat(Math.max(0, fieldCount - 1)), value: hostileValueArb })
        .map((r): Mutation => ({ m: 'replace', ...r })),
    },
    {
      weight: 4,
      arbitrary: fc
        .record({
          name: fc.oneof(pickFrom(HOSTILE_NAMES), fc.string({ maxLength: 12 })),
          value: fc.oneof(
            pickFrom([
              text('{"polluted":"yes"}'),
              text('{"prototype":{"polluted":"yes"}}'),
              text('{"__proto__":{"polluted":"yes"}}'),
              text('null'),
              text('"x"'),
              text('1'),
              text('[]'),
            ]),
            hostileValueArb,
          ),
        })
        .map((r): Mutation => ({ m: 'member', ...r })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ field: fc.nat(Math.max(0, fieldCount - 1)), value: hostileValueArb })
        .map((r): Mutation => ({ m: 'duplicate', ...r })),
    },
    { weight: 3, arbitrary: pickFrom(HOSTILE_BODIES).map((body): Mutation => ({ m: 'whole', body })) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom('array', 'twice', 'bom', 'trailing', 'comment', 'trailingComma', 'nested')
        .map((how): Mutation => ({ m: 'wrap', how })),
    },
  );

function bodyBytes(spec: BodySpec): Buffer {
  const member = (name: string, value: Buffer): Buffer =>
    Buffer.concat([Buffer.from(`${JSON.stringify(name)}:`), value]);
  const json = (v: Json): Buffer => Buffer.from(JSON.stringify(v), 'utf8');
  const { fields, mutation } = spec;
  const members = fields.map(([name, value]) => member(name, json(value)));
  if (mutation.m === 'replace' && fields.length > 0) {
    const i = mutation.field % fields.length;
    members[i] = member(fields[i]![0], render(mutation.value));
  }
  if (mutation.m === 'member') members.push(member(mutation.name, render(mutation.value)));
  if (mutation.m === 'duplicate' && fields.length > 0)
    members.push(member(fields[mutation.field % fields.length]![0], render(mutation.value)));
  const object = Buffer.concat([
    Buffer.from('{'),
    ...members.flatMap((m, i) => (i === 0 ? [m] : [Buffer.from(','), m])),
    Buffer.from('}'),
  ]);
  switch (mutation.m) {
    case 'truncate':
      return object.subarray(0, Math.floor(mutation.at * (object.length - 1)));
    case 'whole':
      return render(mutation.body);
    case 'wrap':
      switch (mutation.how) {
        case 'array':
          return Buffer.concat([Buffer.from('['), object, Buffer.from(']')]);
        case 'twice':
          return Buffer.concat([object, object]);
        case 'bom':
          return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), object]);
        case 'trailing':
          return Buffer.concat([object, Buffer.from(' garbage')]);
        case 'comment':
          return Buffer.concat([Buffer.from('/* c */'), object]);
        case 'trailingComma':
          return Buffer.concat([object.subarray(0, object.length - 1), Buffer.from(',}')]);
        case 'nested':
          return Buffer.concat([Buffer.from('{"value":'), object, Buffer.from('}')]);
      }
    // eslint-disable-next-line no-fallthrough
    default:
      return object;
  }
}

/** The write endpoints with a valid body each (before mutation). */
function writeArb(w: World): fc.Arbitrary<{ aim: string; method: string; path: string; fields: [string, Json][] }> {
  const po = pickFrom(w.purchaseOrders);
  const pr = pickFrom(w.purchaseRequests);
  const bpo = pickFrom(w.blanketPOs);
  const create = (set: WriteSet): fc.Arbitrary<[string, Json][]> => {
    switch (set) {
      case 'PurchaseRequests':
        return fc.tuple(safeText, safeText).map(([a, b]) => [
          ['RequestedBy', a],
          ['Description', b],
        ]);
      case 'PRLineItems':
        return fc.tuple(pr, safeText).map(([p, t]) => [
          ['PRNumber', p],
          ['Description', t],
          ['Quantity', 2],
          ['UnitOfMeasure', 'EA'],
        ]);
      case 'PurchaseOrders':
        return fc.tuple(safeText, safeText).map(([a, b]) => [
          ['VendorID', a],
          ['Notes', b],
        ]);
      case 'POLineItems':
        return fc.tuple(po, safeText).map(([p, t]) => [
          ['PONumber', p],
          ['Description', t],
          ['QuantityOrdered', 3],
          ['UnitOfMeasure', 'EA'],
          ['UnitPrice', '12.5'],
        ]);
      case 'POAttachments':
        return po.map((p) => [
          ['PONumber', p],
          ['FileName', 'a.txt'],
          ['ContentType', 'text/plain'],
          ['ContentBase64', 'aGVsbG8='],
        ]);
      case 'BlanketPOs':
        return fc.tuple(fc.stringMatching(/^HB-[0-9A-Z]{1,10}$/), safeText).map(([k, v]) => [
          ['BlanketPONumber', k],
          ['VendorID', v],
          ['StartDate', '2024-01-01'],
          ['LimitAmount', 1000],
        ]);
      case 'BlanketPOLineItems':
        return fc.tuple(bpo, safeText).map(([b, t]) => [
          ['BlanketPONumber', b],
          ['Description', t],
          ['UnitOfMeasure', 'EA'],
          ['UnitPrice', 4],
        ]);
    }
  };
  /** The key of an existing entity of the set, as fields, and a field to change. */
  const existing = (set: WriteSet): fc.Arbitrary<{ key: [string, Json][]; change: [string, Json] }> => {
    const lines = (rows: readonly (readonly [string, number])[], header: string) =>
      fc.tuple(pickFrom(rows), safeText).map(([[h, n], t]) => ({
        key: [
          [header, h],
          ['LineNumber', n],
        ] as [string, Json][],
        change: ['Description', t] as [string, Json],
      }));
    switch (set) {
      case 'PurchaseRequests':
        return fc.tuple(pr, safeText).map(([k, t]) => ({ key: [['PRNumber', k]], change: ['Description', t] }));
      case 'PRLineItems':
        return lines(w.prLines, 'PRNumber');
      case 'PurchaseOrders':
        return fc.tuple(po, safeText).map(([k, t]) => ({ key: [['PONumber', k]], change: ['Notes', t] }));
      case 'POLineItems':
        return lines(w.poLines, 'PONumber');
      case 'POAttachments':
        return fc
          .tuple(pickFrom(w.attachments), safeText)
          .map(([k, t]) => ({ key: [['AttachmentID', k]], change: ['Description', t] }));
      case 'BlanketPOs':
        return fc.tuple(bpo, safeText).map(([k, t]) => ({ key: [['BlanketPONumber', k]], change: ['Description', t] }));
      case 'BlanketPOLineItems':
        return lines(w.blanketLines, 'BlanketPONumber');
    }
  };
  const keyPath = (key: [string, Json][]): string =>
    key.length === 1 && typeof key[0]![1] === 'string' && !key[0]![0].endsWith('ID')
      ? `(${pct(quoted(key[0]![1]))})`
      : `(${key.map(([k, v]) => `${k}=${typeof v === 'string' && k !== 'AttachmentID' ? pct(quoted(v)) : String(v)}`).join(',')})`;
  const set = pickFrom(WRITE_SETS);
  return fc.oneof(
    set.chain((s) => create(s).map((fields) => ({ aim: `POST ${s}`, method: 'POST', path: `/${s}`, fields }))),
    set.chain((s) =>
      existing(s).map(({ key, change }) => ({
        aim: `PATCH ${s}`,
        method: 'PATCH',
        path: `/${s}`,
        fields: [...key, change],
      })),
    ),
    set.chain((s) =>
      existing(s).map(({ key, change }) => ({
        aim: `PATCH ${s}(key)`,
        method: 'PATCH',
        path: `/${s}${keyPath(key)}`,
        fields: [change],
      })),
    ),
    fc
      .tuple(fc.oneof(pickFrom(w.meters), fc.stringMatching(/^HM-[0-9A-Z]{1,8}$/)), fc.integer({ min: 0, max: 9999 }))
      .map(([meter, reading]) => ({
        aim: 'POST MeterReadings',
        method: 'POST',
        path: '/MeterReadings',
        fields: [
          ['MeterID', meter],
          ['MeterReading', reading / 4],
          ['Unit', 'HRS'],
          ['ReadingDate', '2024-05-01T08:30:00'],
        ] as [string, Json][],
      })),
    fc.tuple(pickFrom(w.workOrders), safeText).map(([wo, t]) => ({
      aim: 'POST AddComment',
      method: 'POST',
      path: `/WorkOrders(${pct(quoted(wo))})/AddComment`,
      fields: [
        ['Comment', t],
        ['Username', 'hostile'],
      ] as [string, Json][],
    })),
    pickFrom(w.labor).map(({ workOrder, body }) => ({
      aim: 'POST RemoveActualLabor',
      method: 'POST',
      path: `/WorkOrders(${pct(quoted(workOrder))})/RemoveActualLabor`,
      fields: Object.entries(body) as [string, Json][],
    })),
  );
}

function pathArb(w: World): fc.Arbitrary<string> {
  const fragment = pickFrom(PATH_FRAGMENTS);
  const randomSegment = fc
    .array(
      fc.oneof(
        fragment,
        fc.stringMatching(/^[A-Za-z0-9_$.-]{1,12}$/),
        fc.string({ unit: 'binary', maxLength: 6 }).map(pct),
      ),
      { minLength: 1, maxLength: 5 },
    )
    .map((parts) => parts.join(''));
  const site = fc.oneof(
    { weight: 24, arbitrary: fc.constant(w.site) },
    { weight: 3, arbitrary: fc.constant(w.otherSite) },
    {
      weight: 4,
      arbitrary: fc.oneof(
        randomSegment,
        fc.constantFrom('', '..', '%2e%2e', '.', 'ODataApi', w.site.toUpperCase(), `${w.site}%00`, `${w.site}/`),
        fc.constant(pct(w.site).replace(/[a-z]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)),
        fc.integer({ min: 2000, max: 20_000 }).map((n) => 's'.repeat(n)),
      ),
    },
  );
  const root = fc.oneof(
    { weight: 24, arbitrary: fc.constant('/ODataApi/v1') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '/odataapi/v1',
        '/ODataApi',
        '/ODataApi/v2',
        '/ODataApi%2Fv1',
        '',
        '/ODataApi/v1/..',
        '//ODataApi/v1',
      ),
    },
  );
  const set = fc.oneof(
    { weight: 10, arbitrary: pickFrom(ENTITY_SETS) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        fc.constantFrom(
          'WorkOrderComments',
          'ActualLabor',
          'MeterReadingHistory',
          'accounts',
          'Account',
          'PlantData.Parts',
        ),
        randomSegment,
      ),
    },
  );
  const someKey = fc.oneof(
    pickFrom(w.purchaseOrders),
    pickFrom(w.workOrders),
    pickFrom(w.meters),
    pickFrom(w.parts),
    pickFrom(w.accounts),
    pickFrom(w.attachments),
  );
  const keyPart = fc.oneof(
    { weight: 6, arbitrary: someKey.map((k) => `(${pct(quoted(k))})`) },
    {
      weight: 3,
      arbitrary: pickFrom(w.poLines).map(([po, n]) => `(PONumber=${pct(quoted(po))},LineNumber=${n})`),
    },
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        "('x')",
        '(1)',
        '(-1)',
        '(1.5)',
        '(99999999999999999999)',
        '(null)',
        '(true)',
        '(00000000-0000-0000-0000-000000000000)',
        '(2024-01-01)',
        "('unterminated)",
        "('''')",
        "('a''b')",
        '(x)',
        '()',
        '(',
        "('a',)",
        "(PONumber='x')",
        "(PONumber='x',LineNumber=1,LineNumber=2)",
        "(PONumber=1,LineNumber='x')",
        '(LineNumber=1)',
        "(Foo='x')",
        "(duration'P1D')",
        "(binary'AAA=')",
        '($it)',
        "('%00')",
        "('%C0%AF')",
        "('%ED%A0%80')",
        "('%E2%82')",
        `('${'K'.repeat(3000)}')`,
        `(${'('.repeat(500)}'x'${')'.repeat(500)})`,
      ),
    },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map((s) => `(${pct(s)})`) },
  );
  const resource = fc.oneof(
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        '/',
        '/$metadata',
        '/$batch',
        '/$count',
        '/$entity',
        '/$crossjoin(Parts,Accounts)',
      ),
    },
    { weight: 6, arbitrary: set.map((s) => `/${s}`) },
    { weight: 1, arbitrary: set.map((s) => `/${s}/$count`) },
    { weight: 5, arbitrary: fc.tuple(set, keyPart).map(([s, k]) => `/${s}${k}`) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(set, keyPart, fc.oneof(pickFrom(NAVIGATIONS), randomSegment))
        .map(([s, k, n]) => `/${s}${k}/${n}`),
    },
    {
      weight: 2,
      arbitrary: fc.array(randomSegment, { minLength: 1, maxLength: 4 }).map((segs) => `/${segs.join('/')}`),
    },
  );
  const queryValue = fc.oneof(
    { weight: 4, arbitrary: pickFrom(QUERY_VALUES).map(pct) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(pickFrom(Object.values(FIELDS).flat()), pickFrom([' eq ', ' desc', ',', ' gt 1']))
        .map(([f, op]) => pct(`${f}${op}`)),
    },
    { weight: 2, arbitrary: fc.tuple(fc.string({ maxLength: 15 }), fragment).map(([s, f]) => `${pct(s)}${f}`) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map(pct) },
  );
  const query = fc.option(
    fc
      .array(
        fc.oneof(
          { weight: 8, arbitrary: fc.tuple(pickFrom(QUERY_NAMES), queryValue).map(([n, v]) => `${pct(n)}=${v}`) },
          { weight: 1, arbitrary: fc.oneof(pickFrom(QUERY_NAMES).map(pct), fragment) },
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((items) => `?${items.join('&')}`),
    { nil: '', freq: 2 },
  );
  // now and then a fragment lands anywhere in the path
  const insertion = fc.option(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fragment), {
    nil: undefined,
    freq: 4,
  });
  return fc.tuple(site, root, resource, query, insertion).map(([s, r, res, q, ins]) => {
    let path = `/${s}${r}${res}`;
    if (ins !== undefined) {
      const at = 1 + Math.floor(ins[0] * (path.length - 1));
      path = `${path.slice(0, at)}${ins[1]}${path.slice(at)}`;
    }
    return `${path}${q}`;
  });
}

function caseArb(w: World): fc.Arbitrary<CaseSpec> {
  const method = fc.oneof(
    { weight: 30, arbitrary: pickFrom(METHODS) },
    { weight: 3, arbitrary: fc.oneof(pickFrom(ODD_METHODS), fc.stringMatching(/^[A-Z]{1,10}$/)) },
  );
  const version = fc.oneof(
    { weight: 40, arbitrary: fc.constant('HTTP/1.1') },
    {
      weight: 2,
      arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'HTTX/1.1', 'http/1.1', 'HTTP/1.1 extra'),
    },
  );
  const contentTypes = fc.oneof(
    { weight: 12, arbitrary: fc.constant(['application/json']) },
    { weight: 3, arbitrary: pickFrom(CONTENT_TYPES).map((t) => [t]) },
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fc.tuple(pickFrom(CONTENT_TYPES), pickFrom(CONTENT_TYPES)).map(([a, b]) => [a, b]) },
  );
  const extra = fc.oneof(
    { weight: 6, arbitrary: fc.constant([]) },
    {
      weight: 3,
      arbitrary: fc.array(
        fc.oneof(
          { weight: 5, arbitrary: pickFrom(EXTRA_HEADERS) },
          {
            weight: 1,
            arbitrary: fc.tuple(
              fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/),
              fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((v) => v.replace(/[\r\n]/g, '')),
            ),
          },
          {
            weight: 1,
            arbitrary: fc.integer({ min: 9000, max: 40_000 }).map((n): [string, string] => ['X-Huge', 'h'.repeat(n)]),
          },
          { weight: 1, arbitrary: fc.constant<[string, string]>(['X-Nul', 'a\u0000b']) },
        ),
        { maxLength: 4 },
      ),
    },
  );
  const write = fc
    .tuple(
      writeArb(w),
      fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: method }),
      fc.oneof(
        { weight: 12, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), pickFrom(PATH_FRAGMENTS)) },
      ),
    )
    .chain(([endpoint, otherMethod, insertion]) =>
      mutationArb(endpoint.fields.length).map((mutation) => {
        let path = `/${w.site}/ODataApi/v1${endpoint.path}`;
        if (insertion !== undefined) {
          const at = 1 + Math.floor(insertion[0] * (path.length - 1));
          path = `${path.slice(0, at)}${insertion[1]}${path.slice(at)}`;
        }
        return {
          aim: endpoint.aim,
          method: otherMethod ?? endpoint.method,
          target: path,
          body: { fields: endpoint.fields, mutation } satisfies BodySpec,
        };
      }),
    );
  const general = fc
    .tuple(pathArb(w), method, fc.nat(3))
    .chain(([target, m, withBody]) =>
      (withBody === 0
        ? writeArb(w).chain((e) =>
            mutationArb(e.fields.length).map((mutation): BodySpec | undefined => ({ fields: e.fields, mutation })),
          )
        : fc.constant<BodySpec | undefined>(undefined)
      ).map((body) => ({ aim: 'random', method: m, target, body })),
    );
  return fc
    .tuple(fc.oneof(write, general), version, hostArb, credArb, contentTypes, extra, framingArb)
    .map(([c, version, host, cred, contentTypes, extra, framing]) => ({
      ...c,
      version,
      host,
      cred,
      contentTypes:
        c.body === undefined && contentTypes.length === 1 && contentTypes[0] === 'application/json' ? [] : contentTypes,
      extra,
      framing,
    }));
}

interface Rendered {
  readonly bytes: Buffer;
  readonly halfClose: boolean;
  readonly head: boolean;
  readonly label: string;
}

function credentialHeaders(cred: Cred, w: World): [string, string][] {
  const basic = (user: string | Buffer, password: string): string =>
    `Basic ${Buffer.concat([Buffer.isBuffer(user) ? user : Buffer.from(user), Buffer.from(`:${password}`)]).toString('base64')}`;
  switch (cred) {
    case 'key':
      return [['API_KEY', w.key]];
    case 'basic':
      return [['Authorization', w.basic]];
    case 'otherKey':
      return [['API_KEY', w.otherKey]];
    case 'otherBasic':
      return [['Authorization', w.otherBasic]];
    case 'none':
      return [];
    case 'garbageKey':
      return [['API_KEY', `${w.key.split('.')[0]}.garbage`]];
    case 'emptyKey':
      return [['API_KEY', '']];
    case 'latin1Key':
      return [['API_KEY', `${w.key}\u00ff\u00e9`]];
    case 'nulKey':
      return [['API_KEY', `${w.key}\u0000`]];
    case 'hugeKey':
      return [['API_KEY', 'k'.repeat(20_000)]];
    case 'dupKeys':
      return [
        ['API_KEY', w.key],
        ['API_KEY', w.key],
      ];
    case 'dupKeyThenBad':
      return [
        ['API_KEY', w.key],
        ['API_KEY', 'bad'],
      ];
    case 'dupBadThenKey':
      return [
        ['API_KEY', 'bad'],
        ['API_KEY', w.key],
      ];
    case 'badBasic':
      return [['Authorization', 'Basic !!!not base64!!!']];
    case 'basicInvalidUtf8':
      return [['Authorization', basic(Buffer.from([0xff, 0xc0, 0xaf]), 'x')]];
    case 'basicNoColon':
      return [['Authorization', `Basic ${Buffer.from('planner').toString('base64')}`]];
    case 'bearer':
      return [['Authorization', `Bearer ${w.key}`]];
    case 'keyAndBadBasic':
      return [
        ['API_KEY', w.key],
        ['Authorization', 'Basic Og=='],
      ];
    case 'dashName':
      return [['API-KEY', w.key]];
  }
}

function renderCase(spec: CaseSpec, w: World): Rendered {
  const headers: (readonly [string, string])[] = [];
  const hostValue = `127.0.0.1:${w.port}`;
  if (spec.host === 'normal') headers.push(['Host', hostValue]);
  else if (spec.host === 'garbage') headers.push(['Host', 'a"b\\c<\u00ff>']);
  else if (spec.host === 'duplicate') headers.push(['Host', hostValue], ['Host', 'evil.example']);
  else if (spec.host === 'empty') headers.push(['Host', '']);
  headers.push(['Connection', 'close']);
  headers.push(...credentialHeaders(spec.cred, w));
  for (const type of spec.contentTypes) headers.push(['Content-Type', type]);
  headers.push(...spec.extra);
  let body = spec.body === undefined ? Buffer.alloc(0) : bodyBytes(spec.body);
  let halfClose = false;
  const hasBody = spec.body !== undefined;
  if (hasBody) {
    switch (spec.framing) {
      case 'length':
        headers.push(['Content-Length', String(body.length)]);
        break;
      case 'chunked': {
        headers.push(['Transfer-Encoding', 'chunked']);
        const size = Math.max(1, Math.ceil(body.length / 3));
        const chunks: Buffer[] = [];
        for (let i = 0; i < body.length; i += size) {
          const piece = body.subarray(i, i + size);
          chunks.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
        }
        chunks.push(Buffer.from('0\r\n\r\n'));
        body = Buffer.concat(chunks);
        break;
      }
      case 'none':
        break;
      case 'short':
        headers.push(['Content-Length', String(body.length + 1 + (body.length % 97))]);
        halfClose = true;
        break;
      case 'long':
        headers.push(['Content-Length', String(Math.floor(body.length / 2))]);
        break;
      case 'huge':
        headers.push(['Content-Length', '99999999999999']);
        halfClose = true;
        break;
      case 'badLength':
        headers.push([
          'Content-Length',
          ['abc', '-1', '1e3', '0x10', `${body.length}, ${body.length + 1}`][body.length % 5]!,
        ]);
        break;
      case 'lengthAndChunked':
        headers.push(['Content-Length', String(body.length)], ['Transfer-Encoding', 'chunked']);
        break;
    }
  }
  const bytes = Buffer.concat([
    requestBytes(spec.method, spec.target, headers, body, spec.version),
    Buffer.from(spec.trailing ?? '', 'latin1'),
  ]);
  const shownBody = hasBody
    ? `${body.length} body bytes ${JSON.stringify(body.subarray(0, 200).toString('latin1'))}`
    : 'no body';
  const shownHeaders = headers.map(([n, v]) => `${n}: ${v.length > 100 ? `${v.slice(0, 60)}…(${v.length})` : v}`);
  const label = `${spec.aim}: ${spec.trailing === undefined ? '' : `(then ${JSON.stringify(spec.trailing)}) `}${JSON.stringify(`${spec.method} ${spec.target.length > 300 ? `${spec.target.slice(0, 300)}…(${spec.target.length})` : spec.target} ${spec.version}`)} ${JSON.stringify(shownHeaders)} ${spec.framing} ${shownBody}`;
  return { bytes, halfClose, head: spec.method === 'HEAD', label };
}

// ── the fixed corpus: each named hostile input once ──────────────────────────

interface Named {
  readonly name: string;
  readonly spec: (w: World) => CaseSpec;
}

function named(
  name: string,
  method: string,
  path: (w: World) => string,
  options: Partial<Omit<CaseSpec, 'method' | 'target'>> = {},
): Named {
  return {
    name,
    spec: (w) => ({
      aim: name,
      method,
      target: path(w),
      version: 'HTTP/1.1',
      host: 'normal',
      cred: 'key',
      contentTypes: options.body === undefined ? [] : ['application/json'],
      extra: [],
      body: undefined,
      framing: 'length',
      ...options,
    }),
  };
}

const root = (w: World): string => `/${w.site}/ODataApi/v1`;
const poBody = (mutation: Mutation): BodySpec => ({
  fields: [
    ['VendorID', 'HOSTILE'],
    ['Notes', 'named'],
  ],
  mutation,
});

const CORPUS: readonly Named[] = [
  named('truncated JSON', 'POST', (w) => `${root(w)}/PurchaseOrders`, { body: poBody({ m: 'truncate', at: 0.5 }) }),
  named('body shorter than its Content-Length', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'none' }),
    framing: 'short',
  }),
  named('a Content-Length beyond any limit', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'none' }),
    framing: 'huge',
  }),
  named('1e400', 'POST', (w) => `${root(w)}/POLineItems`, {
    body: {
      fields: [
        ['PONumber', 'x'],
        ['UnitPrice', 1],
      ],
      mutation: { m: 'replace', field: 1, value: text('1e400') },
    },
  }),
  named('a 100-digit integer', 'POST', (w) => `${root(w)}/MeterReadings`, {
    body: {
      fields: [
        ['MeterID', 'M'],
        ['MeterReading', 1],
      ],
      mutation: { m: 'replace', field: 1, value: text(`1${'0'.repeat(99)}`) },
    },
  }),
  named('100k [ unclosed', 'POST', (w) => `${root(w)}/PurchaseRequests`, {
    body: poBody({ m: 'whole', body: repeat('', '[', HUNDRED_K) }),
  }),
  named('100k [ closed, as a field', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'replace', field: 1, value: repeat('', '[', HUNDRED_K, ']'.repeat(HUNDRED_K)) }),
  }),
  named('50k nested objects', 'PATCH', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'whole', body: repeat('', '{"a":', HUNDRED_K / 2, `1${'}'.repeat(HUNDRED_K / 2)}`) }),
  }),
  named('a 10 MB string in a field with a length limit', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'replace', field: 0, value: repeat('"', 'x', TEN_MB, '"') }),
  }),
  named('a NUL byte in a JSON string', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'replace', field: 0, value: bytesIn('"a', [0x00], 'b"') }),
  }),
  named('an escaped NUL', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'replace', field: 0, value: text('"a\\u0000b"') }),
  }),
  named('invalid UTF-8 in the body', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'replace', field: 0, value: bytesIn('"', [0xc0, 0xaf, 0xff], '"') }),
  }),
  named('a lone surrogate', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'replace', field: 1, value: text('"\\ud800"') }),
  }),
  named('__proto__ in a create', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'member', name: '__proto__', value: text('{"polluted":"yes"}') }),
  }),
  named('constructor.prototype in an action', 'POST', (w) => `${root(w)}/WorkOrders('${w.workOrders[0]}')/AddComment`, {
    body: {
      fields: [
        ['Comment', 'c'],
        ['Username', 'u'],
      ],
      mutation: { m: 'member', name: 'constructor', value: text('{"prototype":{"polluted":"yes"}}') },
    },
  }),
  named('prototype in an update', 'PATCH', (w) => `${root(w)}/PurchaseOrders('${w.purchaseOrders[0]}')`, {
    body: { fields: [['Notes', 'n']], mutation: { m: 'member', name: 'prototype', value: text('{"polluted":"yes"}') } },
  }),
  named('duplicate keys', 'POST', (w) => `${root(w)}/MeterReadings`, {
    body: {
      fields: [
        ['MeterID', 'HM-DUP'],
        ['MeterReading', 1],
      ],
      mutation: { m: 'duplicate', field: 1, value: text('"not a number"') },
    },
  }),
  named('an array for an object', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'wrap', how: 'array' }),
  }),
  named('a wrong type', 'POST', (w) => `${root(w)}/WorkOrders('${w.workOrders[0]}')/RemoveActualLabor`, {
    body: {
      fields: [
        ['PeopleID', 'p'],
        ['Craft', 'c'],
        ['Hours', 1],
        ['StartDate', '2024-01-01T00:00:00Z'],
      ],
      mutation: { m: 'replace', field: 2, value: text('{"h":1}') },
    },
  }),
  named('%00 in a key', 'GET', (w) => `${root(w)}/PurchaseOrders('%00')`),
  named('%00 in the key of an action', 'POST', (w) => `${root(w)}/WorkOrders('%00')/AddComment`, {
    body: {
      fields: [
        ['Comment', 'c'],
        ['Username', 'u'],
      ],
      mutation: { m: 'none' },
    },
  }),
  named('%C0%AF in a key', 'GET', (w) => `${root(w)}/WorkOrders('%C0%AF')`),
  named('an overlong encoding in the site', 'GET', (w) => `/${w.site}%E0%80%AF/ODataApi/v1/Parts`),
  named('a surrogate encoded in a set name', 'GET', (w) => `${root(w)}/Parts%ED%A0%80`),
  named('a malformed % in the query', 'GET', (w) => `${root(w)}/Parts?$filter=%G1`),
  named('.. towards the other site', 'GET', (w) => `/${w.site}/ODataApi/v1/../../${w.otherSite}/ODataApi/v1/Parts`),
  named(
    '%2e%2e towards the other site',
    'GET',
    (w) => `/${w.site}/ODataApi/v1/%2e%2e/%2e%2e/${w.otherSite}/ODataApi/v1/Parts`,
  ),
  named('a 12 000-character segment', 'GET', (w) => `${root(w)}/${'A'.repeat(12_000)}`),
  named('a 20 000-character segment', 'GET', (w) => `${root(w)}/${'A'.repeat(20_000)}`),
  named('a raw NUL in the path', 'GET', (w) => `${root(w)}/Parts\u0000`),
  named('raw invalid UTF-8 in the path', 'GET', (w) => `${root(w)}/Parts('\u00ff\u00c0')`),
  named('random $options', 'GET', (w) => `${root(w)}/Parts?$foo=1&$expand=*&$top=-1&$skip=x&$filter=`),
  named('a huge header', 'GET', (w) => `${root(w)}/Parts`, { extra: [['X-Huge', 'h'.repeat(40_000)]] }),
  named('a huge API_KEY', 'GET', (w) => `${root(w)}/Parts`, { cred: 'hugeKey' }),
  named('duplicate API_KEY headers, both valid', 'GET', (w) => `${root(w)}/Parts?$top=1`, { cred: 'dupKeys' }),
  named('duplicate API_KEY headers, valid then invalid', 'GET', (w) => `${root(w)}/Parts?$top=1`, {
    cred: 'dupKeyThenBad',
  }),
  named('a NUL in a header', 'GET', (w) => `${root(w)}/Parts`, { cred: 'nulKey' }),
  named('Basic with invalid UTF-8', 'GET', (w) => `${root(w)}/Parts`, { cred: 'basicInvalidUtf8' }),
  named('a garbage method', 'FOO', (w) => `${root(w)}/Parts`),
  named('PROPFIND', 'PROPFIND', (w) => `${root(w)}/Parts`),
  named('OPTIONS', 'OPTIONS', (w) => `${root(w)}/Parts`),
  named('DELETE', 'DELETE', (w) => `${root(w)}/PurchaseOrders('${w.purchaseOrders[0]}')`),
  named('PUT', 'PUT', (w) => `${root(w)}/PurchaseOrders('${w.purchaseOrders[0]}')`, { body: poBody({ m: 'none' }) }),
  named('HEAD', 'HEAD', (w) => `${root(w)}/Parts`),
  named('a lower-case method', 'get', (w) => `${root(w)}/Parts`),
  named('CONNECT', 'CONNECT', (w) => `${root(w)}/Parts`),
  named('an empty Content-Type', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'none' }),
    contentTypes: [''],
  }),
  named('a malformed Content-Type', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'none' }),
    contentTypes: ['a/b/c'],
  }),
  named('two Content-Types', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'none' }),
    contentTypes: ['text/plain', 'application/json'],
  }),
  named('no Host', 'GET', (w) => `${root(w)}/Parts?$top=1`, { host: 'missing' }),
  named('Expect: foo', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'none' }),
    extra: [['Expect', 'foo']],
  }),
  named('Expect: 100-continue', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'replace', field: 0, value: text('1') }),
    extra: [['Expect', '100-continue']],
  }),
  named(
    'a valid write, then garbage on the same connection',
    'POST',
    (w) => `${root(w)}/WorkOrders('${w.workOrders[1]}')/AddComment`,
    {
      body: {
        fields: [
          ['Comment', 'pipelined'],
          ['Username', 'u'],
        ],
        mutation: { m: 'none' },
      },
      trailing: 'GARBAGE\r\n\r\n',
    },
  ),
  named('Content-Length and Transfer-Encoding', 'POST', (w) => `${root(w)}/PurchaseOrders`, {
    body: poBody({ m: 'none' }),
    framing: 'lengthAndChunked',
  }),
];

// ── the property ─────────────────────────────────────────────────────────────

describe.each(kinds)('hostile requests over raw HTTP on %s (property)', (storage) => {
  let s: RunningServer;
  let w: World;
  let databases: Awaited<ReturnType<typeof databasesOf>>;
  let baseline: Snapshot;
  const initialPrototypes = prototypeNames();
  const statuses = new Map<string, number>();
  let requests = 0;
  let acceptedWrites = 0;
  let bytesSent = 0;
  /** What accepted writes sent: a later success may show it (it is data now), an error may not. */
  const stored: string[] = [];

  beforeAll(async () => {
    s = await startServer(storage);
    const southUser = { name: 'south-planner', password: 'south password 9' };
    await s.backend.directory.createUser(s.otherSite, southUser.name, southUser.password);
    const port = Number(new URL(s.origin).port);
    const rows = async (path: string): Promise<Record<string, unknown>[]> => {
      const response = await fetch(`${s.root}${path}`, { headers: { API_KEY: s.key } });
      expect(response.status, path).toBe(200);
      return ((await response.json()) as { value: Record<string, unknown>[] }).value;
    };
    const column = async (path: string, name: string) => (await rows(path)).map((r) => String(r[name]));
    const lines = async (path: string, header: string) =>
      (await rows(path)).map((r): [string, number] => [String(r[header]), Number(r['LineNumber'])]);
    const workOrders = await column('/WorkOrders?$select=WorkOrderID&$top=10', 'WorkOrderID');
    const labor: World['labor'][number][] = [];
    for (const wo of workOrders.slice(0, 6)) {
      for (const r of await rows(`/WorkOrders('${wo}')/ActualLabor?$top=3`)) {
        labor.push({
          workOrder: wo,
          body: {
            PeopleID: String(r['PeopleID']),
            Craft: String(r['Craft']),
            Hours: r['Hours'] as Json,
            OTHours: r['OTHours'] as Json,
            StartDate: String(r['StartDate']),
          },
        });
      }
    }
    const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
    w = {
      port,
      site: s.site,
      otherSite: s.otherSite,
      key: s.key,
      otherKey: s.otherKey,
      basic: basic(s.user.name, s.user.password),
      otherBasic: basic(southUser.name, southUser.password),
      purchaseOrders: await column('/PurchaseOrders?$select=PONumber&$top=6', 'PONumber'),
      purchaseRequests: await column('/PurchaseRequests?$select=PRNumber&$top=6', 'PRNumber'),
      blanketPOs: await column('/BlanketPOs?$select=BlanketPONumber&$top=4', 'BlanketPONumber'),
      poLines: await lines('/POLineItems?$select=PONumber,LineNumber&$top=6', 'PONumber'),
      prLines: await lines('/PRLineItems?$select=PRNumber,LineNumber&$top=6', 'PRNumber'),
      blanketLines: await lines('/BlanketPOLineItems?$select=BlanketPONumber,LineNumber&$top=6', 'BlanketPONumber'),
      attachments: await column('/POAttachments?$select=AttachmentID&$top=4', 'AttachmentID'),
      workOrders,
      meters: await column('/MeterReadings?$select=MeterID&$top=5', 'MeterID'),
      parts: await column('/Parts?$select=PartID&$top=5', 'PartID'),
      accounts: await column('/Accounts?$select=Account&$top=5', 'Account'),
      labor,
    };
    for (const [name, list] of Object.entries(w))
      if (Array.isArray(list)) expect(list.length, `demo ${name}`).toBeGreaterThan(0);
    databases = await databasesOf(s, [s.site, s.otherSite]);
    baseline = await snapshot(databases);
    expect(rowCount(baseline)).toBeGreaterThan(500);
  }, 60_000);
  afterAll(async () => s?.close(), 30_000);

  /** Sends one case and checks every property; returns the problems found. */
  async function check(spec: CaseSpec): Promise<void> {
    const { bytes, halfClose, head, label } = renderCase(spec, w);
    const result = await exchange(w.port, bytes, { halfClose, head, timeoutMs: 30_000 });
    requests++;
    bytesSent += bytes.length;
    const status = result.answer?.status;
    const tallyKey = status === undefined ? 'none' : String(status);
    statuses.set(tallyKey, (statuses.get(tallyKey) ?? 0) + 1);
    const problems: string[] = [];
    if (result.answer === undefined) problems.push('no answer');
    else {
      const quotable = result.answer.status < 300 ? [...sentForms(bytes), ...stored] : sentForms(bytes);
      problems.push(...answerProblems(result.answer, quotable, head));
    }
    // the server keeps answering
    const probe = await exchange(
      w.port,
      simpleRequest(w.port, 'GET', `/${w.site}/ODataApi/v1/Accounts?$top=1`, { API_KEY: w.key }),
    );
    if (probe.answer?.status !== 200) problems.push(`the next valid GET: ${describeExchange(probe)}`);
    // the data: only a successful write may change it
    const after = await snapshot(databases);
    const wrote =
      status !== undefined && status >= 200 && status < 300 && ['POST', 'PATCH', 'PUT', 'DELETE'].includes(spec.method);
    if (wrote) {
      acceptedWrites++;
      stored.push(bytes.toString('utf8'));
      baseline = after;
    } else {
      const diff = snapshotDiff(baseline, after);
      if (diff.length > 0) {
        problems.push(`the data changed:\n${diff.join('\n')}`);
        baseline = after;
      }
    }
    // the process the server runs in
    if (!isDeepStrictEqual(prototypeNames(), initialPrototypes))
      problems.push(`a built-in prototype changed: ${JSON.stringify(prototypeNames()['Object.prototype'])}`);
    const inherited = inheritedPollution();
    if (inherited.length > 0) problems.push(`every object now has ${inherited.join(', ')}`);
    expect(problems, `${label}\n→ ${describeExchange(result)}`).toEqual([]);
  }

  it.each(CORPUS.map((c) => [c.name, c] as const))('answers cleanly: %s', async (_name, c) => {
    await check(c.spec(w));
  });

  it(
    'answers every generated hostile request cleanly, keeps answering, and changes nothing it refused',
    async () => {
      const started = performance.now();
      await fc.assert(
        fc.asyncProperty(fc.array(caseArb(w), { minLength: 1, maxLength: 4 }), async (cases) => {
          for (const c of cases) await check(c);
        }),
        { numRuns: RUNS },
      );
      const seconds = (performance.now() - started) / 1000;
      const shown = [...statuses].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}:${v}`);
      console.info(
        `hostile ${storage}: ${RUNS} runs, ${requests} hostile requests (+${requests} follow-up GETs), ` +
          `${(bytesSent / 1e6).toFixed(1)} MB sent, ${acceptedWrites} accepted writes, ${seconds.toFixed(1)} s; ` +
          `statuses ${shown.join(' ')}`,
      );
      // the runs did reach the server's every outcome
      const count = (prefix: string) =>
        [...statuses].filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v, 0);
      expect(requests).toBeGreaterThanOrEqual(RUNS);
      expect(count('2'), 'successes').toBeGreaterThan(0);
      expect(statuses.get('400') ?? 0, '400s').toBeGreaterThan(requests / 20);
      expect(statuses.get('401') ?? 0, '401s').toBeGreaterThan(0);
      expect(statuses.get('404') ?? 0, '404s').toBeGreaterThan(0);
      expect(acceptedWrites, 'accepted writes').toBeGreaterThan(0);
    },
    180_000 * SCALE,
  );
});
