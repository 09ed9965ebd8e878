// Tenant isolation as a property (fast-check over real HTTP): random interleavings of reads and writes against the
// two demo sites of one server, each request sent to either site's URL with a credential drawn from both sites'
// valid, revoked, foreign and garbage ones. A run is a list of batches; in each batch two clients, one per site
// address, send their requests side by side (each in order).
//
// Properties, checked on every response:
// - a request to site X with anything but a valid credential of X (its own API key, or Basic credentials of its own
//   user; with both an API key and Basic credentials, the key decides) is a 401 with WWW-Authenticate and an error
//   body, never data, and writes nothing;
// - a successful response from X contains no marker written through the other site, nor any marker of a refused
//   write: every marker-shaped token in it was written through X and acknowledged;
// - X's reads see all of X's acknowledged writes: probes by marker prefix return exactly the records the model holds
//   (the other site's prefix: nothing), a GET by key finds each, and after every run and after all runs each site
//   holds exactly the records written through it.
// A last property sends concurrent writes to one site (server-assigned keys, line numbers, comments, readings).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, storages, type RunningServer } from './harness.js';

const kinds = await storages({ mysql: true });
/** TENANCY_RUNS (default 20): the first property's runs; the second's runs and the time limits scale along. */
const RUNS = Number.parseInt(process.env.TENANCY_RUNS ?? '20', 10) || 20;
const SCALE = Math.max(1, RUNS / 20);
const scaled = (n: number): number => Math.round(n * SCALE);

type Side = 'A' | 'B';
const SIDES: readonly Side[] = ['A', 'B'];
const opposite = (side: Side): Side => (side === 'A' ? 'B' : 'A');
type Whose = 'own' | 'other';
type Json = Record<string, unknown>;

// ── generated requests ───────────────────────────────────────────────────────

/** A credential, relative to the site the request is sent to ("own" = that site's). */
type CredSpec =
  | { readonly kind: 'key'; readonly whose: Whose }
  | { readonly kind: 'basic'; readonly whose: Whose }
  | { readonly kind: 'revoked'; readonly whose: Whose }
  | { readonly kind: 'wrongPassword'; readonly whose: Whose; readonly password: string }
  | { readonly kind: 'unknownUser'; readonly user: string }
  | { readonly kind: 'garbageKey'; readonly variant: GarbageVariant; readonly text: string }
  | { readonly kind: 'malformedAuth'; readonly header: string }
  | { readonly kind: 'none' }
  /** An API key and Basic credentials together: `key` says whose key; the Basic user is the other site's. */
  | { readonly kind: 'both'; readonly key: Whose };

type GarbageVariant = 'random' | 'tampered' | 'truncated' | 'idOnly' | 'secretOnly' | 'swapped' | 'empty' | 'padded';

const isValid = (cred: CredSpec): boolean =>
  ((cred.kind === 'key' || cred.kind === 'basic') && cred.whose === 'own') ||
  (cred.kind === 'both' && cred.key === 'own');

interface ReadSpec {
  readonly fields: readonly string[];
  readonly filters: readonly string[];
}

/** Collection reads with $filter/$select/$top drawn from these (all valid against the model). */
const READS: Readonly<Record<string, ReadSpec>> = {
  Accounts: {
    fields: ['Account', 'Description', 'IsActive'],
    filters: ['IsActive eq true', "startswith(Account,'5')", 'IsActive eq false or Description eq null'],
  },
  Parts: {
    fields: ['PartID', 'Description', 'UnitCost', 'QuantityOnHand', 'IsCritical'],
    filters: ['QuantityOnHand gt 10', "UnitOfMeasure eq 'EA'", 'IsCritical eq true and IsActive eq true'],
  },
  PurchaseOrders: {
    fields: ['PONumber', 'VendorID', 'Status', 'Notes', 'FreightAmount'],
    filters: ["Status eq 'Draft'", "startswith(VendorID,'MK')", "contains(Notes,'MK')", 'FreightAmount gt 100'],
  },
  PurchaseRequests: {
    fields: ['PRNumber', 'Description', 'Status', 'RequestedBy', 'Priority'],
    filters: ["startswith(RequestedBy,'MK')", 'Priority le 3', "Status eq 'Draft'", "contains(Description,'MK')"],
  },
  POLineItems: {
    fields: ['PONumber', 'LineNumber', 'Description', 'UnitPrice', 'ExtendedPrice'],
    filters: ['UnitPrice gt 50', "Status eq 'Open'"],
  },
  WorkOrders: {
    fields: ['WorkOrderID', 'Description', 'Status', 'Priority', 'ActualHours'],
    filters: ['Priority le 2', "Status eq 'INPRG'", 'IsOpen eq true', 'Comments/any()'],
  },
  MeterReadings: {
    fields: ['MeterID', 'MeterReading', 'Unit', 'ReadingDate'],
    filters: ["Unit eq 'HRS'", 'MeterReading gt 100'],
  },
  BlanketPOs: {
    fields: ['BlanketPONumber', 'VendorID', 'Status', 'LimitAmount'],
    filters: ["Status eq 'Active'", 'LimitAmount gt 1000'],
  },
};

type Op =
  | {
      readonly op: 'read';
      readonly set: string;
      readonly filter: string | undefined;
      readonly select: readonly string[] | undefined;
      readonly top: number | undefined;
    }
  | { readonly op: 'probe'; readonly what: 'PO' | 'PR' | 'Comments'; readonly whose: Whose; readonly wo: number }
  | { readonly op: 'getKey'; readonly set: 'PO' | 'PR'; readonly whose: Whose | 'demo'; readonly pick: number }
  | { readonly op: 'post'; readonly set: 'PO' | 'PR'; readonly explicitKey: boolean }
  | {
      readonly op: 'patch';
      readonly set: 'PO' | 'PR';
      readonly whose: Whose;
      readonly pick: number;
      readonly byPath: boolean;
    }
  | { readonly op: 'comment'; readonly wo: number };

interface RequestSpec {
  readonly target: Side;
  readonly cred: CredSpec;
  readonly op: Op;
}

const whose = fc.constantFrom<Whose>('own', 'other');
const headerText = fc.stringMatching(/^[A-Za-z0-9._~+/=-]{1,60}$/);

const credArb: fc.Arbitrary<CredSpec> = fc.oneof(
  { weight: 7, arbitrary: fc.constant<CredSpec>({ kind: 'key', whose: 'own' }) },
  { weight: 3, arbitrary: fc.constant<CredSpec>({ kind: 'basic', whose: 'own' }) },
  { weight: 2, arbitrary: fc.constant<CredSpec>({ kind: 'key', whose: 'other' }) },
  { weight: 1, arbitrary: fc.constant<CredSpec>({ kind: 'basic', whose: 'other' }) },
  { weight: 1, arbitrary: whose.map((w): CredSpec => ({ kind: 'revoked', whose: w })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ whose, password: fc.string({ maxLength: 30 }) })
      .map((r): CredSpec => ({ kind: 'wrongPassword', ...r })),
  },
  {
    weight: 1,
    arbitrary: fc.stringMatching(/^[a-z][a-z0-9]{0,15}$/).map((user): CredSpec => ({ kind: 'unknownUser', user })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        variant: fc.constantFrom<GarbageVariant>(
          'random',
          'tampered',
          'truncated',
          'idOnly',
          'secretOnly',
          'swapped',
          'empty',
          'padded',
        ),
        text: headerText,
      })
      .map((r): CredSpec => ({ kind: 'garbageKey', ...r })),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        headerText.map((t) => `Bearer ${t}`),
        headerText.map((t) => `Basic ${t}`),
        fc.constant('Basic'),
        fc.constant(`Basic ${Buffer.from('planner').toString('base64')}`),
        fc.constant(`Basic ${Buffer.from(':').toString('base64')}`),
      )
      .map((header): CredSpec => ({ kind: 'malformedAuth', header })),
  },
  { weight: 1, arbitrary: fc.constant<CredSpec>({ kind: 'none' }) },
  { weight: 1, arbitrary: whose.map((w): CredSpec => ({ kind: 'both', key: w })) },
);

const readArb: fc.Arbitrary<Op> = fc.constantFrom(...Object.keys(READS)).chain((set) => {
  const spec = READS[set]!;
  return fc.record({
    op: fc.constant('read' as const),
    set: fc.constant(set),
    filter: fc.option(fc.constantFrom(...spec.filters), { nil: undefined }),
    select: fc.option(fc.subarray([...spec.fields], { minLength: 1 }), { nil: undefined }),
    top: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
  });
});

const setArb = fc.constantFrom<'PO' | 'PR'>('PO', 'PR');
const pick = fc.nat(1000);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: readArb },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('probe' as const),
      what: fc.constantFrom<'PO' | 'PR' | 'Comments'>('PO', 'PR', 'Comments'),
      whose,
      wo: pick,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('getKey' as const),
      set: setArb,
      whose: fc.constantFrom<Whose | 'demo'>('own', 'other', 'demo'),
      pick,
    }),
  },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('post' as const), set: setArb, explicitKey: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('patch' as const), set: setArb, whose, pick, byPath: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('comment' as const), wo: pick }) },
);

const requestArb: fc.Arbitrary<RequestSpec> = fc.record({
  target: fc.constantFrom<Side>('A', 'B'),
  cred: credArb,
  op: opArb,
});

/** A run: batches of requests sent concurrently, one batch after the other. */
const runArb = fc.array(fc.array(requestArb, { minLength: 1, maxLength: 4 }), { minLength: 6, maxLength: 12 });

// ── markers ──────────────────────────────────────────────────────────────────

/** `MK` + the site letter + the run (3 base-36 digits) + a sequence number (4 digits): 10 characters. */
const MARKER = /MK[AB][0-9a-z]{3}\d{4}/g;
const tokens = (text: string): string[] => text.match(MARKER) ?? [];

// ── the model ────────────────────────────────────────────────────────────────

interface PO {
  readonly vendor: string;
  notes: string;
  readonly explicit: boolean;
}
interface PR {
  readonly requestedBy: string;
  description: string;
  readonly explicit: boolean;
}
interface SideModel {
  /** By PONumber / PRNumber. */
  readonly pos: Map<string, PO>;
  readonly prs: Map<string, PR>;
  /** Comment markers by work order. */
  readonly comments: Map<string, Set<string>>;
}
const emptySide = (): SideModel => ({ pos: new Map(), prs: new Map(), comments: new Map() });

const sortRows = (rows: string[][]): string[][] =>
  [...rows].sort((a, b) => a.join('\u0000').localeCompare(b.join('\u0000')));

const addTo = <K, V>(map: Map<K, Set<V>>, key: K, value: V): void => {
  const set = map.get(key) ?? new Set<V>();
  set.add(value);
  map.set(key, set);
};

describe.each(kinds)('tenant isolation on %s (property, real HTTP)', (storage) => {
  let s: RunningServer;
  interface SiteInfo {
    readonly name: string;
    readonly root: string;
    readonly key: string;
    readonly revokedKey: string;
    readonly user: { readonly name: string; readonly password: string };
  }
  const sites = {} as Record<Side, SiteInfo>;
  /** Work orders present in both demo sites (comments go to the same ids on both sides). */
  let sharedWorkOrders: string[] = [];
  /** Demo purchase orders of each site, for GET by key. */
  const demoOrders = {} as Record<Side, string[]>;

  // registries across runs (and shrinking replays): what each site acknowledged, what was refused
  const acked: Record<Side, Set<string>> = { A: new Set(), B: new Set() };
  const ackedPOVendors: Record<Side, Set<string>> = { A: new Set(), B: new Set() };
  const ackedPRRequesters: Record<Side, Set<string>> = { A: new Set(), B: new Set() };
  const ackedComments: Record<Side, Map<string, Set<string>>> = { A: new Map(), B: new Map() };
  const refused = new Set<string>();
  let runCounter = 0;
  let sequence = 0;
  let requests = 0;
  const statuses = new Map<number, number>();

  beforeAll(async () => {
    s = await startServer(storage);
    const southUser = { name: s.user.name, password: 'south-side password 42' };
    await s.backend.directory.createUser(s.otherSite, southUser.name, southUser.password);
    const revoked = async (site: string): Promise<string> => {
      const { id, key } = await s.backend.directory.createKey(site, 'revoked');
      expect(await s.backend.directory.revokeKey(site, id)).toBe(true);
      return key;
    };
    sites.A = {
      name: s.site,
      root: s.root,
      key: s.key,
      revokedKey: await revoked(s.site),
      user: s.user,
    };
    sites.B = {
      name: s.otherSite,
      root: `${s.origin}/${s.otherSite}/ODataApi/v1`,
      key: s.otherKey,
      revokedKey: await revoked(s.otherSite),
      user: southUser,
    };
    const ids = async (side: Side, path: string, field: string): Promise<string[]> => {
      const response = await fetch(`${sites[side].root}${path}`, { headers: { API_KEY: sites[side].key } });
      expect(response.status).toBe(200);
      return ((await response.json()) as { value: Json[] }).value.map((r) => String(r[field]));
    };
    const a = await ids('A', '/WorkOrders?$select=WorkOrderID&$top=8', 'WorkOrderID');
    const b = new Set(await ids('B', '/WorkOrders?$select=WorkOrderID&$top=8', 'WorkOrderID'));
    sharedWorkOrders = a.filter((id) => b.has(id)).slice(0, 4);
    expect(sharedWorkOrders.length).toBeGreaterThan(0);
    for (const side of SIDES) demoOrders[side] = await ids(side, '/PurchaseOrders?$select=PONumber&$top=5', 'PONumber');
  }, 60_000);
  afterAll(async () => s?.close(), 30_000);

  // ── credentials ────────────────────────────────────────────────────────────

  const basic = (user: string, password: string): string =>
    `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

  function credentialHeaders(cred: CredSpec, target: Side): Record<string, string> {
    const site = (w: Whose): SiteInfo => sites[w === 'own' ? target : opposite(target)];
    const own = sites[target];
    const [ownId = '', ownSecret = ''] = own.key.split('.');
    const [otherId = ''] = sites[opposite(target)].key.split('.');
    switch (cred.kind) {
      case 'key':
        return { API_KEY: site(cred.whose).key };
      case 'basic':
        return { authorization: basic(site(cred.whose).user.name, site(cred.whose).user.password) };
      case 'revoked':
        return { API_KEY: site(cred.whose).revokedKey };
      case 'wrongPassword': {
        const user = site(cred.whose).user;
        const password =
          cred.password === sites.A.user.password || cred.password === sites.B.user.password
            ? `${cred.password}!`
            : cred.password;
        return { authorization: basic(user.name, password) };
      }
      case 'unknownUser':
        return { authorization: basic(`${cred.user}x`, own.user.password) };
      case 'garbageKey': {
        const last = ownSecret.slice(-1);
        const key = {
          random: cred.text,
          tampered: `${ownId}.${ownSecret.slice(0, -1)}${last === 'A' ? 'B' : 'A'}`,
          truncated: own.key.slice(0, own.key.length - 1 - (cred.text.length % 8)),
          idOnly: ownId,
          secretOnly: ownSecret,
          swapped: `${otherId}.${ownSecret}`,
          empty: '',
          padded: `${own.key}.${cred.text}`,
        }[cred.variant];
        return { API_KEY: key };
      }
      case 'malformedAuth':
        return { authorization: cred.header };
      case 'both': {
        // the API key decides when both are sent (tenancy.ts); the Basic credentials are the other site's user's
        const basicOf = site(cred.key === 'own' ? 'other' : 'own').user;
        return { API_KEY: site(cred.key).key, authorization: basic(basicOf.name, basicOf.password) };
      }
      case 'none':
        return {};
    }
  }

  // ── requests ───────────────────────────────────────────────────────────────

  interface Sent {
    readonly status: number;
    readonly text: string;
    readonly headers: Headers;
  }

  async function send(
    target: Side,
    headers: Record<string, string>,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Sent> {
    const response = await fetch(`${sites[target].root}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    requests++;
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    return { status: response.status, text: await response.text(), headers: response.headers };
  }
  const validKey = (target: Side) => ({ API_KEY: sites[target].key });

  /** Every marker-shaped token in a successful response of `target` was written through `target` and kept. */
  function checkTokens(target: Side, text: string, own: ReadonlySet<string>, what: string): void {
    for (const token of tokens(text)) {
      const ok = (acked[target].has(token) || own.has(token)) && !refused.has(token);
      expect(ok, `${what}: the response of site ${target} holds ${token}, not written through it`).toBe(true);
    }
  }

  // ── one run ────────────────────────────────────────────────────────────────

  async function run(batches: readonly (readonly RequestSpec[])[]): Promise<void> {
    const runTag = (runCounter++).toString(36).padStart(3, '0').slice(-3);
    const prefix = (side: Side): string => `MK${side}${runTag}`;
    const marker = (side: Side): string => `${prefix(side)}${String(sequence++ % 10_000).padStart(4, '0')}`;
    const model: Record<Side, SideModel> = { A: emptySide(), B: emptySide() };

    const poProbe = (side: Side) =>
      `/PurchaseOrders?$filter=${encodeURIComponent(`startswith(VendorID,'${prefix(side)}')`)}&$select=PONumber,VendorID,Notes`;
    const prProbe = (side: Side) =>
      `/PurchaseRequests?$filter=${encodeURIComponent(`startswith(RequestedBy,'${prefix(side)}')`)}&$select=PRNumber,RequestedBy,Description`;
    const commentProbe = (side: Side, wo: string) =>
      `/WorkOrders('${wo}')/Comments?$filter=${encodeURIComponent(`startswith(Comment,'${prefix(side)}')`)}&$select=Comment`;

    // a site's probe of its own records of the run answers exactly what the model holds
    const checkOwnPOs = (target: Side, rows: Json[], what: string): void => {
      const got = rows.map((r) => [String(r['PONumber']), String(r['VendorID']), String(r['Notes'])]);
      const expected = [...model[target].pos].map(([key, po]) => [key, po.vendor, po.notes]);
      expect(sortRows(got), what).toEqual(sortRows(expected));
    };
    const checkOwnPRs = (target: Side, rows: Json[], what: string): void => {
      const got = rows.map((r) => [String(r['PRNumber']), String(r['RequestedBy']), String(r['Description'])]);
      const expected = [...model[target].prs].map(([key, pr]) => [key, pr.requestedBy, pr.description]);
      expect(sortRows(got), what).toEqual(sortRows(expected));
    };
    const checkOwnComments = (target: Side, wo: string, rows: Json[], what: string): void => {
      const got = rows.map((r) => String(r['Comment'])).sort();
      expect(got, what).toEqual([...(model[target].comments.get(wo) ?? [])].sort());
    };

    const keysOf = (side: Side, set: 'PO' | 'PR', explicitOnly: boolean): string[] =>
      [...(set === 'PO' ? model[side].pos : model[side].prs)]
        .filter(([, r]) => !explicitOnly || r.explicit)
        .map(([k]) => k)
        .sort();

    /** Sends one request and checks its answer; a success updates the model at once. */
    async function execute(spec: RequestSpec): Promise<void> {
      const { target, cred, op } = spec;
      const headers = credentialHeaders(cred, target);
      const ok = isValid(cred);
      const what = JSON.stringify(spec);
      let method = 'GET';
      let path: string;
      let body: unknown;
      let expected: number;
      /** Checks a successful answer and updates the model. */
      let onSuccess: (json: Json, response: Sent) => void;
      const written: string[] = [];

      switch (op.op) {
        case 'read': {
          const query: string[] = [];
          if (op.filter !== undefined) query.push(`$filter=${encodeURIComponent(op.filter)}`);
          if (op.select !== undefined) query.push(`$select=${op.select.join(',')}`);
          if (op.top !== undefined) query.push(`$top=${op.top}`);
          path = `/${op.set}${query.length === 0 ? '' : `?${query.join('&')}`}`;
          expected = 200;
          onSuccess = (json) => {
            const rows = json['value'] as Json[];
            expect(Array.isArray(rows), what).toBe(true);
            if (op.top !== undefined) expect(rows.length, what).toBeLessThanOrEqual(op.top);
            if (op.select !== undefined)
              for (const row of rows)
                // (the selected properties; control information such as @odata.etag beside them)
                expect(
                  Object.keys(row)
                    .filter((k) => !k.startsWith('@'))
                    .sort(),
                  what,
                ).toEqual([...op.select].sort());
            // the context URL names the site that answered, and the selected fields (in any order)
            const context = String(json['@odata.context']);
            const base = `${sites[target].root}/$metadata#${op.set}`;
            if (op.select === undefined) expect(context, what).toBe(base);
            else {
              expect(context.startsWith(`${base}(`) && context.endsWith(')'), `${what}: ${context}`).toBe(true);
              expect(
                context
                  .slice(base.length + 1, -1)
                  .split(',')
                  .sort(),
                what,
              ).toEqual([...op.select].sort());
            }
            // the marker filters select exactly the site's own records
            if (
              op.filter === "startswith(VendorID,'MK')" &&
              op.top === undefined &&
              op.set === 'PurchaseOrders' &&
              json['@odata.nextLink'] === undefined
            ) {
              const vendors = rows.map((r) => r['VendorID']).filter((v) => v !== undefined);
              if (op.select === undefined || op.select.includes('VendorID'))
                expect(new Set(vendors), what).toEqual(ackedPOVendors[target]);
            }
          };
          break;
        }
        case 'probe': {
          const side = op.whose === 'own' ? target : opposite(target);
          const wo = sharedWorkOrders[op.wo % sharedWorkOrders.length]!;
          path = op.what === 'PO' ? poProbe(side) : op.what === 'PR' ? prProbe(side) : commentProbe(side, wo);
          expected = 200;
          onSuccess = (json) => {
            const rows = json['value'] as Json[];
            if (side !== target) expect(rows, `${what}: site ${target} shows records of site ${side}`).toEqual([]);
            else if (op.what === 'PO') checkOwnPOs(target, rows, what);
            else if (op.what === 'PR') checkOwnPRs(target, rows, what);
            else checkOwnComments(target, wo, rows, what);
          };
          break;
        }
        case 'getKey': {
          if (op.whose === 'demo') {
            const orders = demoOrders[target];
            const key = orders[op.pick % orders.length]!;
            path = `/PurchaseOrders('${key}')`;
            expected = 200;
            onSuccess = (json) => expect(json['PONumber'], what).toBe(key);
            break;
          }
          const side = op.whose === 'own' ? target : opposite(target);
          // another site's record is addressed by a key that exists only there (an explicit marker key)
          const keys = keysOf(side, op.set, side !== target);
          const set = op.set === 'PO' ? 'PurchaseOrders' : 'PurchaseRequests';
          const key = keys.length === 0 ? marker(side) : keys[op.pick % keys.length]!;
          path = `/${set}('${key}')`;
          expected = side === target && keys.length > 0 ? 200 : 404;
          onSuccess = (json) => {
            if (op.set === 'PO') {
              const po = model[target].pos.get(key)!;
              expect([json['PONumber'], json['VendorID'], json['Notes']], what).toEqual([key, po.vendor, po.notes]);
            } else {
              const pr = model[target].prs.get(key)!;
              expect([json['PRNumber'], json['RequestedBy'], json['Description']], what).toEqual([
                key,
                pr.requestedBy,
                pr.description,
              ]);
            }
          };
          break;
        }
        case 'post': {
          method = 'POST';
          const m = marker(target);
          written.push(m);
          const set = op.set === 'PO' ? 'PurchaseOrders' : 'PurchaseRequests';
          const [keyName, markerField, textField] =
            op.set === 'PO' ? ['PONumber', 'VendorID', 'Notes'] : ['PRNumber', 'RequestedBy', 'Description'];
          const text = `text ${m}`;
          path = `/${set}`;
          body = { [markerField]: m, [textField]: text, ...(op.explicitKey ? { [keyName]: m } : {}) };
          expected = 201;
          onSuccess = (json, response) => {
            const key = String(json[keyName]);
            if (op.explicitKey) expect(key, what).toBe(m);
            else expect(key, what).toMatch(op.set === 'PO' ? /^PO-\d{6}$/ : /^PR-\d{6}$/);
            expect([json[markerField], json[textField]], what).toEqual([m, text]);
            expect(response.headers.get('location'), what).toBe(`${sites[target].root}/${set}('${key}')`);
            if (op.set === 'PO') {
              expect(model[target].pos.has(key), `${what}: ${key} assigned twice`).toBe(false);
              model[target].pos.set(key, { vendor: m, notes: text, explicit: op.explicitKey });
              ackedPOVendors[target].add(m);
            } else {
              expect(model[target].prs.has(key), `${what}: ${key} assigned twice`).toBe(false);
              model[target].prs.set(key, { requestedBy: m, description: text, explicit: op.explicitKey });
              ackedPRRequesters[target].add(m);
            }
          };
          break;
        }
        case 'patch': {
          method = 'PATCH';
          const side = op.whose === 'own' ? target : opposite(target);
          const keys = keysOf(side, op.set, side !== target);
          const key = keys.length === 0 ? marker(side) : keys[op.pick % keys.length]!;
          const set = op.set === 'PO' ? 'PurchaseOrders' : 'PurchaseRequests';
          const keyName = op.set === 'PO' ? 'PONumber' : 'PRNumber';
          const field = op.set === 'PO' ? 'Notes' : 'Description';
          const m = marker(target);
          written.push(m);
          path = op.byPath ? `/${set}('${key}')` : `/${set}`;
          body = op.byPath ? { [field]: m } : { [keyName]: key, [field]: m };
          expected = side === target && keys.length > 0 ? 200 : 404;
          onSuccess = (json) => {
            expect([json[keyName], json[field]], what).toEqual([key, m]);
            if (op.set === 'PO') model[target].pos.get(key)!.notes = m;
            else model[target].prs.get(key)!.description = m;
          };
          break;
        }
        case 'comment': {
          method = 'POST';
          const wo = sharedWorkOrders[op.wo % sharedWorkOrders.length]!;
          const m = marker(target);
          written.push(m);
          path = `/WorkOrders('${wo}')/AddComment`;
          body = { Comment: m, Username: 'property' };
          expected = 200;
          onSuccess = (_json, response) => {
            expect(response.text, what).toBe('true');
            addTo(model[target].comments, wo, m);
            addTo(ackedComments[target], wo, m);
          };
          break;
        }
      }

      const response = await send(target, headers, method, path, body);
      let json: Json | undefined;
      try {
        json = JSON.parse(response.text) as Json;
      } catch {
        json = undefined;
      }
      const detail = `${what}: ${response.status} ${response.text.slice(0, 300)}`;
      if (!ok) {
        expect(response.status, detail).toBe(401);
        expect(response.headers.get('www-authenticate'), detail).toMatch(/^Basic /);
        expect(Object.keys(json ?? {}), detail).toEqual(['error']);
        expect((json?.['error'] as Json | undefined)?.['code'], detail).toBe('Unauthorized');
        expect(tokens(response.text), `${detail}: a 401 with data`).toEqual([]);
        for (const m of written) refused.add(m);
        return;
      }
      expect(response.status, detail).toBe(expected);
      if (expected >= 300) {
        // an error may quote the request, nothing else
        const requestTokens = new Set(tokens(`${path} ${JSON.stringify(body ?? null)}`));
        for (const token of tokens(response.text)) expect(requestTokens.has(token), detail).toBe(true);
        for (const m of written) refused.add(m);
        return;
      }
      checkTokens(target, response.text, new Set(written), what);
      for (const m of written) acked[target].add(m);
      onSuccess(json!, response);
    }

    for (const batch of batches) {
      // two clients side by side, one per site address, each sending its requests of the batch in order
      await Promise.all(
        SIDES.map(async (side) => {
          for (const spec of batch) if (spec.target === side) await execute(spec);
        }),
      );
    }

    // at the end of the run each site holds exactly its acknowledged writes of the run, and nothing of the other's
    for (const side of SIDES) {
      const rowsOf = async (path: string): Promise<Json[]> => {
        const response = await send(side, validKey(side), 'GET', path);
        expect(response.status, path).toBe(200);
        checkTokens(side, response.text, new Set(), `final ${path}`);
        return (JSON.parse(response.text) as { value: Json[] }).value;
      };
      for (const probeSide of SIDES) {
        const pos = await rowsOf(poProbe(probeSide));
        const prs = await rowsOf(prProbe(probeSide));
        if (probeSide !== side) {
          expect(pos).toEqual([]);
          expect(prs).toEqual([]);
        } else {
          checkOwnPOs(side, pos, `final purchase orders of ${side}`);
          checkOwnPRs(side, prs, `final purchase requests of ${side}`);
        }
        for (const wo of sharedWorkOrders) {
          const comments = await rowsOf(commentProbe(probeSide, wo));
          if (probeSide !== side) expect(comments).toEqual([]);
          else checkOwnComments(side, wo, comments, `final comments of ${side} on ${wo}`);
        }
      }
    }
  }

  /** After all runs (and shrinking replays): each site holds exactly the writes acknowledged through it. */
  async function checkAllRuns(): Promise<void> {
    const all = async (side: Side, path: string): Promise<Json[]> => {
      const rows: Json[] = [];
      let url: string | undefined = `${sites[side].root}${path}`;
      while (url !== undefined) {
        const response = await fetch(url, { headers: { API_KEY: sites[side].key } });
        expect(response.status).toBe(200);
        const json = (await response.json()) as { value: Json[]; '@odata.nextLink'?: string };
        rows.push(...json.value);
        url = json['@odata.nextLink'];
      }
      return rows;
    };
    const filter = (expression: string) => `$filter=${encodeURIComponent(expression)}`;
    for (const side of SIDES) {
      const pos = await all(side, `/PurchaseOrders?${filter("startswith(VendorID,'MK')")}&$select=VendorID,Notes`);
      expect(new Set(pos.map((r) => String(r['VendorID'])))).toEqual(ackedPOVendors[side]);
      expect(pos.length).toBe(ackedPOVendors[side].size);
      const prs = await all(
        side,
        `/PurchaseRequests?${filter("startswith(RequestedBy,'MK')")}&$select=RequestedBy,Description`,
      );
      expect(new Set(prs.map((r) => String(r['RequestedBy'])))).toEqual(ackedPRRequesters[side]);
      expect(prs.length).toBe(ackedPRRequesters[side].size);
      for (const wo of sharedWorkOrders) {
        const comments = await all(
          side,
          `/WorkOrders('${wo}')/Comments?${filter("startswith(Comment,'MK')")}&$select=Comment`,
        );
        expect(new Set(comments.map((r) => String(r['Comment'])))).toEqual(ackedComments[side].get(wo) ?? new Set());
      }
      // every marker left in the site's records (patched texts included) is one written through it
      for (const token of tokens(JSON.stringify([pos, prs]))) {
        expect(acked[side].has(token) && !refused.has(token), token).toBe(true);
      }
    }
  }

  it(
    'never lets a request to one site read or write with anything but that site’s credential, nor leak the other site’s writes',
    async () => {
      await fc.assert(fc.asyncProperty(runArb, run), {
        numRuns: RUNS,
        interruptAfterTimeLimit: scaled(90_000),
        markInterruptAsFailure: true,
      });
      await checkAllRuns();
      // the runs did talk to the server, and exercised both outcomes
      expect(requests).toBeGreaterThanOrEqual(200);
      expect(statuses.get(401) ?? 0).toBeGreaterThan(30);
      expect((statuses.get(200) ?? 0) + (statuses.get(201) ?? 0)).toBeGreaterThan(60);
      expect(ackedPOVendors.A.size + ackedPOVendors.B.size).toBeGreaterThan(0);
    },
    scaled(120_000),
  );

  // Writes that draw a server-assigned number (a key from a per-site sequence, the next line number, comment id or
  // reading id) sent at the same time through one site: each is acknowledged, with a number of its own. Purchase
  // orders and requests go to a new empty site per run (the sequence's first use), the rest to site A. PATCHes of one
  // order at the same time, each of another field, all stay (no lost update).
  it(
    'acknowledges every one of concurrent writes through one site: numbers of their own, no lost update',
    async () => {
      type Write = 'po' | 'pr' | 'line' | 'comment' | 'reading' | 'patch';
      /** Each concurrent PATCH of the shared order sets a field of its own: none may undo another. */
      const patchFields = ['Buyer', 'Notes', 'ShipTo', 'PaymentTerms', 'VendorName', 'Account'] as const;
      let runs = 0;
      const property = fc.asyncProperty(
        fc.array(fc.constantFrom<Write>('po', 'pr', 'line', 'comment', 'reading', 'patch'), {
          minLength: 2,
          maxLength: patchFields.length,
        }),
        async (writes) => {
          const n = runs++;
          const fresh = `${sites.A.name}-c${n}`;
          await s.backend.directory.createSite(fresh);
          const freshKey = (await s.backend.directory.createKey(fresh)).key;
          const freshRoot = `${s.origin}/${fresh}/ODataApi/v1`;
          const order = `RACE-${n}`;
          const meter = `RACE-M${n}`;
          const wo = sharedWorkOrders[0]!;
          const post = async (root: string, key: string, path: string, body: unknown, method = 'POST') => {
            const response = await fetch(`${root}${path}`, {
              method,
              headers: { API_KEY: key, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
            return { status: response.status, text: await response.text() };
          };
          const read = async (root: string, key: string, path: string): Promise<Json> => {
            const response = await fetch(`${root}${path}`, { headers: { API_KEY: key } });
            expect(response.status, path).toBe(200);
            return (await response.json()) as Json;
          };
          expect(
            (await post(sites.A.root, sites.A.key, '/PurchaseOrders', { PONumber: order, VendorID: 'RACE' })).status,
          ).toBe(201);
          const countOf = async (path: string) =>
            (await read(sites.A.root, sites.A.key, `${path}${path.includes('?') ? '&' : '?'}$count=true&$top=0`))[
              '@odata.count'
            ] as number;
          const commentsBefore = await countOf(`/WorkOrders('${wo}')/Comments`);
          const results = await Promise.all(
            writes.map((write, i) => {
              switch (write) {
                case 'po':
                  return post(freshRoot, freshKey, '/PurchaseOrders', { VendorID: `RACE-${i}` });
                case 'pr':
                  return post(freshRoot, freshKey, '/PurchaseRequests', { RequestedBy: `RACE-${i}` });
                case 'line':
                  return post(sites.A.root, sites.A.key, '/POLineItems', {
                    PONumber: order,
                    Description: `line ${i}`,
                    QuantityOrdered: 1,
                    UnitOfMeasure: 'EA',
                    UnitPrice: i,
                  });
                case 'comment':
                  return post(sites.A.root, sites.A.key, `/WorkOrders('${wo}')/AddComment`, {
                    Comment: `race ${n}/${i}`,
                    Username: 'race',
                  });
                case 'reading':
                  return post(sites.A.root, sites.A.key, '/MeterReadings', { MeterID: meter, MeterReading: i });
                case 'patch': {
                  const field = patchFields[writes.slice(0, i).filter((w) => w === 'patch').length]!;
                  return post(sites.A.root, sites.A.key, `/PurchaseOrders('${order}')`, { [field]: `p${i}` }, 'PATCH');
                }
              }
            }),
          );
          const statusesOf = results.map(
            (r, i) => `${writes[i]} ${r.status}${r.status >= 300 ? ` ${r.text.slice(0, 160)}` : ''}`,
          );
          expect(statusesOf).toEqual(writes.map((w) => `${w} ${w === 'comment' || w === 'patch' ? 200 : 201}`));
          const count = (w: Write) => writes.filter((x) => x === w).length;
          const distinct = (w: Write, field: string) => {
            const values = results.filter((_, i) => writes[i] === w).map((r) => (JSON.parse(r.text) as Json)[field]);
            expect(new Set(values).size, `${w} ${field}: ${JSON.stringify(values)}`).toBe(values.length);
          };
          distinct('po', 'PONumber');
          distinct('pr', 'PRNumber');
          distinct('line', 'LineNumber');
          expect(await countOf(`/POLineItems?$filter=${encodeURIComponent(`PONumber eq '${order}'`)}`)).toBe(
            count('line'),
          );
          expect(await countOf(`/WorkOrders('${wo}')/Comments`)).toBe(commentsBefore + count('comment'));
          if (count('reading') > 0) expect(await countOf(`/MeterReadings('${meter}')/History`)).toBe(count('reading'));
          const patched = await read(sites.A.root, sites.A.key, `/PurchaseOrders('${order}')`);
          const fields = writes.flatMap((w, i) => (w === 'patch' ? [i] : [])).map((i, j) => [patchFields[j]!, `p${i}`]);
          expect(Object.fromEntries(fields.map(([field]) => [field, patched[field!]])), 'no PATCH lost').toEqual(
            Object.fromEntries(fields),
          );
          expect((await read(freshRoot, freshKey, '/PurchaseOrders?$count=true&$top=0'))['@odata.count']).toBe(
            count('po'),
          );
          expect((await read(freshRoot, freshKey, '/PurchaseRequests?$count=true&$top=0'))['@odata.count']).toBe(
            count('pr'),
          );
        },
      );
      await fc.assert(property, {
        numRuns: scaled(10),
        interruptAfterTimeLimit: scaled(30_000),
        markInterruptAsFailure: true,
      });
    },
    scaled(60_000),
  );
});
