// Deterministic demo records for every set of the reference service: the `--demo` site of `odata-engine serve` and
// `odata-engine seed SITE --rows N`. The same options always give exactly the same rows, whatever the clock says.
//
// How it stays streaming-friendly: every record (a header with its lines and attachments, a work order with its
// comments and labor, a meter with its history) is a pure function of (seed, kind, index), drawn from a PRNG stream
// of its own. So any set can be produced lazily in key order, and a record that refers to another one (a PO line to
// its part, a PO to the purchase request it was raised from) regenerates what it needs instead of looking it up.
// Attributes that other sets need cheaply (the asset and account of a work order, the catalog entry of a part) come
// from small streams of their own.
//
// Values are in the memory backend's row form (docs/backends.md "Row values"): decimals as canonical text computed
// exactly with the backend's decimal arithmetic, dates 'YYYY-MM-DD', instants 'YYYY-MM-DDTHH:MM:SS.sssZ', GUIDs in
// lower case. GUID keys (POAttachments.AttachmentID, ActualLabor.LaborID) are version-4 GUIDs whose first 32 bits
// are stratified by the record's position, so that they look random yet increase in generation order: rows come out
// in key order without sorting.
import type { Row } from '../model/schema.js';
import { civilFromDays } from '../values/calendar.js';
import {
  addDecimal,
  decimalFromBigInt,
  decimalToString,
  mulDecimal,
  parseDecimal,
  roundDecimal,
  type Decimal,
} from '../values/decimal.js';
import { entitySetNames, type EntitySetName } from './model.js';

export interface DemoData {
  /** Rows per entity set name (all eleven sets of entitySetNames), in key order. */
  readonly sets: Readonly<Record<EntitySetName, readonly Row[]>>;
  /** Contained records: work-order comments and actual labor (each row carries its WorkOrderID), meter-reading history (each row carries MeterID). */
  readonly comments: readonly Row[];
  readonly labor: readonly Row[];
  readonly meterHistory: readonly Row[];
}

export interface DemoOptions {
  /** PRNG seed (default a fixed constant): the same seed gives exactly the same data. */
  readonly seed?: number;
  /** Roughly how many rows the largest sets get (default 50; `seed --rows N` uses N, up to 1,000,000: generation must be streaming-friendly and fast, e.g. ~1 s per 100k rows). */
  readonly rows?: number;
  /** The instant used as "now" for timestamps (default 2026-01-15T12:00:00.000Z), so that output does not depend on the clock. */
  readonly now?: string;
}

/** What `demoRows` can stream: an entity set, or one of the contained collections. */
export type DemoSetName = EntitySetName | 'Comments' | 'ActualLabor' | 'MeterHistory';

export const defaultDemoSeed = 20260115;
export const defaultDemoRows = 50;
export const defaultDemoNow = '2026-01-15T12:00:00.000Z';
export const maxDemoRows = 1_000_000;

// ---------------------------------------------------------------------------------------------------------------
// PRNG: mulberry32 per record, seeded by a hash of (seed, kind, index).

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

class Rng {
  private state: number;

  constructor(state: number) {
    this.state = state | 0;
  }

  uint32(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return at(items, Math.floor(this.next() * items.length));
  }

  weighted<T>(table: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const [, weight] of table) total += weight;
    let r = this.next() * total;
    for (const [value, weight] of table) {
      r -= weight;
      if (r < 0) return value;
    }
    return at(table, table.length - 1)[0];
  }
}

function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new RangeError(`index ${index} outside 0..${items.length - 1}`);
  return item;
}

/** Streams: one per kind of record (and per cheap cross-set attribute). */
const Stream = {
  Account: 1,
  Part: 2,
  PartKind: 3,
  Vendor: 4,
  Asset: 5,
  PurchaseRequest: 6,
  PurchaseOrder: 7,
  BlanketPO: 8,
  WorkOrder: 9,
  WorkOrderAsset: 10,
  WorkOrderAccount: 11,
  Meter: 12,
} as const;
type Stream = (typeof Stream)[keyof typeof Stream];

// ---------------------------------------------------------------------------------------------------------------
// Context: sizes and time window.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

interface Counts {
  readonly accounts: number;
  readonly parts: number;
  readonly vendors: number;
  readonly assets: number;
  readonly purchaseRequests: number;
  readonly purchaseOrders: number;
  readonly blanketPOs: number;
  readonly workOrders: number;
  readonly meters: number;
}

/** A PO has at most this many attachments and a work order this many labor records: the GUID strata per record. */
const MAX_ATTACHMENTS = 3;
const MAX_LABOR = 4;

class Context {
  readonly counts: Counts;
  /** Transactions (requests, orders, work orders) happen in [txStart, now). */
  readonly txStart: number;
  private readonly seedHash: number;
  private readonly partBase: number;
  /** Where the parts start in the catalog. */
  readonly partOffset: number;

  constructor(
    seed: number,
    rows: number,
    readonly now: number,
  ) {
    const low = seed >>> 0;
    const high = Math.floor(seed / 4294967296) >>> 0;
    this.seedHash = fmix32(low ^ fmix32(high + 0x9e3779b9));
    const third = Math.ceil(rows / 3);
    this.counts = {
      accounts: clamp(Math.ceil(rows / 5), 10, 2000),
      parts: rows,
      vendors: clamp(Math.ceil(rows / 10), 8, 9999),
      assets: Math.max(12, Math.ceil(rows / 4)),
      purchaseRequests: third,
      purchaseOrders: third,
      blanketPOs: Math.ceil(rows / 10),
      workOrders: rows,
      meters: Math.ceil(rows / 5),
    };
    this.txStart = now - 730 * DAY;
    // Part numbers 'P-10001'...: a base 10^k with room for every part at the same width (so key order is text order).
    let base = 10_000;
    while (base + rows >= base * 10) base *= 10;
    this.partBase = base;
    this.partOffset = this.rng(Stream.PartKind, 0).uint32() % 1_000_000;
  }

  rng(stream: Stream, index: number): Rng {
    const h = fmix32(this.seedHash ^ Math.imul(stream, 0x9e3779b1));
    return new Rng(fmix32((h + Math.imul(index + 1, 0x27d4eb2f)) | 0) ^ h);
  }

  /** 'PO-000001': the server's sequence format, wider only when the count needs it (same width for a whole set). */
  sequence(prefix: string, index: number, count: number, digits = 6): string {
    return prefix + String(index + 1).padStart(Math.max(digits, String(count).length), '0');
  }

  partId(index: number): string {
    return `P-${this.partBase + index + 1}`;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/** A time in the index's stratum of [from, to): strictly increasing with the index, jittered within its slot. */
function slotTime(rng: Rng, index: number, count: number, from: number, to: number): number {
  return Math.floor(from + ((index + 0.05 + 0.9 * rng.next()) * (to - from)) / count);
}

/**
 * A version-4 GUID from the PRNG. With a stratum (slot of slots), its first 32 bits fall in the slot's own range, so
 * GUIDs of increasing slots increase as text: the rows carrying them are in key order as generated.
 */
function guid(rng: Rng, slot?: number, slots?: number): string {
  let a = rng.uint32();
  if (slot !== undefined && slots !== undefined) {
    const width = 4294967296 / slots;
    const low = Math.floor(slot * width);
    const high = Math.floor((slot + 1) * width);
    a = low + Math.floor(rng.next() * (high - low));
  }
  const b = ((rng.uint32() & 0xffff0fff) | 0x00004000) >>> 0;
  const c = ((rng.uint32() & 0x3fffffff) | 0x80000000) >>> 0;
  const d = rng.uint32();
  const bHex = hex8(b);
  const cHex = hex8(c);
  return `${hex8(a)}-${bHex.slice(0, 4)}-${bHex.slice(4)}-${cHex.slice(0, 4)}-${cHex.slice(4)}${hex8(d)}`;
}

const HEX_BYTES: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
function hex8(n: number): string {
  return (
    at(HEX_BYTES, n >>> 24) +
    at(HEX_BYTES, (n >>> 16) & 0xff) +
    at(HEX_BYTES, (n >>> 8) & 0xff) +
    at(HEX_BYTES, n & 0xff)
  );
}

// Instants and dates as text. `Date.prototype.toISOString` is the slowest step of generation, so this formats
// directly (days to civil date: H. Hinnant's algorithm), for years 1000-9999; others go through Date.
const PAD2: readonly string[] = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const PAD3: readonly string[] = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
const MIN_FAST = Date.UTC(1000, 0, 1);
const MAX_FAST = Date.UTC(10000, 0, 1);

const civil: [number, number, number] = [0, 0, 0];

function civilDate(days: number): string {
  const [year, month, day] = civilFromDays(days, civil);
  return `${year}-${at(PAD2, month)}-${at(PAD2, day)}`;
}

/** 'YYYY-MM-DDTHH:MM:SS.sssZ', as `toISOString` writes it. */
function iso(ms: number): string {
  if (!(ms >= MIN_FAST && ms < MAX_FAST)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY);
  let rest = ms - days * DAY;
  const hours = Math.floor(rest / HOUR);
  rest -= hours * HOUR;
  const minutes = Math.floor(rest / MINUTE);
  rest -= minutes * MINUTE;
  const seconds = Math.floor(rest / 1000);
  return `${civilDate(days)}T${at(PAD2, hours)}:${at(PAD2, minutes)}:${at(PAD2, seconds)}.${at(PAD3, rest - seconds * 1000)}Z`;
}

/** 'YYYY-MM-DD': the UTC day of the instant. */
function isoDate(ms: number): string {
  if (!(ms >= MIN_FAST && ms < MAX_FAST)) return new Date(ms).toISOString().slice(0, 10);
  return civilDate(Math.floor(ms / DAY));
}
const floorTo = (ms: number, unit: number): number => Math.floor(ms / unit) * unit;

// ---------------------------------------------------------------------------------------------------------------
// Exact decimals (the memory backend's arithmetic): never a float for money.

const NEGATIVE_POWERS: readonly Decimal[] = [0, 1, 2, 3, 4].map((k) => parseDecimal(`1e-${k}`)!);
const POSITIVE_POWERS: readonly Decimal[] = [0, 1, 2, 3, 4].map((k) => parseDecimal(`1e${k}`)!);
const ZERO = decimalFromBigInt(0n);

/** units × 10^-scale: dec(1250, 2) is 12.5. */
function dec(units: number, scale: number): Decimal {
  return mulDecimal(decimalFromBigInt(BigInt(units)), at(NEGATIVE_POWERS, scale));
}

/** Rounded half away from zero to `scale` digits after the point. */
function roundTo(value: Decimal, scale: number): Decimal {
  return mulDecimal(roundDecimal(mulDecimal(value, at(POSITIVE_POWERS, scale))), at(NEGATIVE_POWERS, scale));
}

function scaleOf(value: Decimal): number {
  return value.exponent < 0 ? -value.exponent : 0;
}

const text = decimalToString;
const SALES_TAX_RATE = parseDecimal('0.0725')!;

// Weight tables: [value, weight].
/** 0: a quantity from 3 to 24. */
const QUANTITY_EA = [
  [1, 30],
  [2, 25],
  [4, 15],
  [6, 10],
  [10, 10],
  [0, 10],
] as const;
const VENDOR_CURRENCIES = [
  ['USD', 90],
  ['CAD', 7],
  ['EUR', 3],
] as const;
const WO_STATUS_OLD = [
  ['CLOSED', 45],
  ['COMP', 30],
  ['CAN', 8],
  ['HOLD', 5],
  ['INPRG', 4],
  ['SCHED', 3],
  ['APPR', 3],
  ['REQ', 2],
] as const;
const WO_STATUS_RECENT = [
  ['COMP', 25],
  ['CLOSED', 10],
  ['INPRG', 20],
  ['SCHED', 15],
  ['HOLD', 10],
  ['APPR', 10],
  ['REQ', 5],
  ['CAN', 5],
] as const;
const WO_STATUS_NEW = [
  ['REQ', 25],
  ['APPR', 25],
  ['SCHED', 20],
  ['INPRG', 15],
  ['HOLD', 5],
  ['COMP', 7],
  ['CAN', 3],
] as const;
const WORK_TYPES = [
  ['PM', 40],
  ['CM', 30],
  ['EM', 6],
  ['PRJ', 6],
  ['SAF', 8],
  ['INS', 10],
] as const;
const COMMENT_COUNTS = [
  [0, 25],
  [1, 35],
  [2, 25],
  [3, 15],
] as const;
const PR_STATUS_OLD = [
  ['Closed', 35],
  ['Ordered', 35],
  ['Rejected', 6],
  ['Canceled', 6],
  ['Approved', 8],
  ['Submitted', 5],
  ['Draft', 5],
] as const;
const PR_STATUS_RECENT = [
  ['Ordered', 30],
  ['Approved', 25],
  ['Submitted', 20],
  ['Draft', 10],
  ['Rejected', 5],
  ['Closed', 5],
  ['Canceled', 5],
] as const;
const PR_STATUS_NEW = [
  ['Draft', 30],
  ['Submitted', 35],
  ['Approved', 25],
  ['Rejected', 5],
  ['Canceled', 5],
] as const;
const PR_KINDS = [
  ['workOrder', 45],
  ['stock', 35],
  ['service', 20],
] as const;
const PR_LINE_COUNTS = [
  [1, 30],
  [2, 25],
  [3, 20],
  [4, 15],
  [5, 10],
] as const;
const PR_PRIORITIES = [
  [1, 5],
  [2, 15],
  [3, 55],
  [4, 15],
  [5, 10],
] as const;
const BLANKET_STATUS_ENDED = [
  ['Expired', 60],
  ['Closed', 40],
] as const;
const BLANKET_STATUS_FUTURE = [
  ['Draft', 50],
  ['Active', 50],
] as const;
const PO_SOURCES = [
  ['request', 50],
  ['blanket', 15],
  ['spot', 35],
] as const;
const PO_STATUS_OLD = [
  ['Closed', 45],
  ['Received', 25],
  ['Canceled', 6],
  ['PartiallyReceived', 8],
  ['Issued', 8],
  ['Approved', 3],
  ['PendingApproval', 2],
  ['Draft', 3],
] as const;
const PO_STATUS_RECENT = [
  ['Issued', 30],
  ['PartiallyReceived', 20],
  ['Received', 20],
  ['Approved', 10],
  ['PendingApproval', 8],
  ['Draft', 5],
  ['Canceled', 4],
  ['Closed', 3],
] as const;
const PO_STATUS_NEW = [
  ['Draft', 25],
  ['PendingApproval', 25],
  ['Approved', 20],
  ['Issued', 25],
  ['Canceled', 5],
] as const;

// ---------------------------------------------------------------------------------------------------------------
// Vocabulary of a plant: people, vendors, assets, parts, accounts.

interface Person {
  readonly id: string;
  readonly craft: string;
}

const CRAFTS = ['MECH', 'MILLWRIGHT', 'ELEC', 'INST', 'PIPEFIT', 'WELDER', 'HVAC', 'LABORER'] as const;
type Craft = (typeof CRAFTS)[number];

/** Maintenance people (PeopleID / AssignedTo / Username) with their craft. */
const TECHNICIANS: readonly Person[] = (
  [
    ['JSMITH', 'MECH'],
    ['MGARCIA', 'MECH'],
    ['RJOHNSON', 'MECH'],
    ['LNGUYEN', 'MECH'],
    ['DWILLIAMS', 'MECH'],
    ['TJONES', 'MILLWRIGHT'],
    ['AMILLER', 'MILLWRIGHT'],
    ['SDAVIS', 'MILLWRIGHT'],
    ['CRODRIGUEZ', 'ELEC'],
    ['BMARTINEZ', 'ELEC'],
    ['PHERNANDEZ', 'ELEC'],
    ['KBROWN', 'ELEC'],
    ['JLOPEZ', 'INST'],
    ['MGONZALEZ', 'INST'],
    ['RWILSON', 'INST'],
    ['EANDERSON', 'PIPEFIT'],
    ['DTHOMAS', 'PIPEFIT'],
    ['STAYLOR', 'WELDER'],
    ['KMOORE', 'WELDER'],
    ['JJACKSON', 'HVAC'],
    ['AMARTIN', 'HVAC'],
    ['CLEE', 'LABORER'],
    ['HPEREZ', 'LABORER'],
  ] as const
).map(([id, craft]) => ({ id, craft }));

const TECHNICIANS_BY_CRAFT: ReadonlyMap<string, readonly Person[]> = new Map(
  CRAFTS.map((craft) => [craft, TECHNICIANS.filter((p) => p.craft === craft)]),
);

/** Operators, planners and supervisors: who requests work and parts. */
const REQUESTERS = [
  'GTHOMPSON',
  'VWHITE',
  'NHARRIS',
  'OSANCHEZ',
  'ICLARK',
  'WRAMIREZ',
  'FLEWIS',
  'YROBINSON',
  'UWALKER',
  'QYOUNG',
  'ZALLEN',
  'JSMITH',
  'CRODRIGUEZ',
  'JLOPEZ',
] as const;
const PR_REQUESTERS: readonly string[] = [...REQUESTERS, ...TECHNICIANS.map((p) => p.id)];
const BUYERS = ['KCHEN', 'MPATEL', 'SOKAFOR', 'JREYES', 'LBAKER'] as const;
const RECEIVING_CLERKS = ['RKING', 'EWRIGHT'] as const;
const PAYABLES_CLERKS = ['BSCOTT', 'MTORRES'] as const;

const VENDOR_PREFIXES = [
  'Apex',
  'Summit',
  'Keystone',
  'Great Lakes',
  'Pioneer',
  'Tri-State',
  'Northwind',
  'Harbor',
  'Liberty',
  'Precision',
  'Allied',
  'Midland',
  'Cascade',
  'Ironwood',
  'Bluewater',
  'Redline',
] as const;
const VENDOR_KINDS = [
  'Industrial Supply',
  'Bearing & Transmission',
  'Electric Supply',
  'Valve & Controls',
  'Fluid Power',
  'Safety Products',
  'Fasteners',
  'Pump & Seal',
  'Instrumentation',
  'Mechanical Services',
  'Lubricants',
  'Motor Repair',
] as const;
const VENDOR_CITIES = [
  'Toledo',
  'Akron',
  'Gary',
  'Peoria',
  'Dayton',
  'Erie',
  'Flint',
  'Joliet',
  'Racine',
  'Duluth',
  'Hamilton',
  'Windsor',
] as const;
const COMPANY_SUFFIXES = [' Inc.', ' Co.', ' LLC', ''] as const;
const MPN_SUFFIXES = ['', '', '-A', '-B', '-SS', '-01'] as const;
const PARTIAL_LINE_STATUSES = ['Open', 'PartiallyReceived', 'Received'] as const;
const PAYMENT_TERMS = ['Net 30', 'Net 30', 'Net 30', 'Net 45', 'Net 60', '2% 10 Net 30', 'Due on receipt'] as const;

interface Vendor {
  readonly id: string;
  readonly name: string;
  readonly terms: string;
  readonly currency: string;
}

function vendorId(ctx: Context, index: number): string {
  return ctx.sequence('V-', index, ctx.counts.vendors, 4);
}

function vendor(ctx: Context, index: number): Vendor {
  const rng = ctx.rng(Stream.Vendor, index);
  const p = VENDOR_PREFIXES.length;
  const k = VENDOR_KINDS.length;
  // The first p × k vendors have distinct names; later ones add a branch city (and a number past that).
  let name = `${at(VENDOR_PREFIXES, index % p)} ${at(VENDOR_KINDS, (index + Math.floor(index / p)) % k)}`;
  const round = Math.floor(index / (p * k));
  if (round > 0) {
    name += ` of ${at(VENDOR_CITIES, (round - 1) % VENDOR_CITIES.length)}`;
    if (round > VENDOR_CITIES.length) name += ` ${Math.ceil(round / VENDOR_CITIES.length)}`;
  }
  const currency = rng.weighted(VENDOR_CURRENCIES);
  if (currency === 'CAD') name += ' Ltd.';
  else if (currency === 'EUR') name += ' GmbH';
  else name += rng.pick(COMPANY_SUFFIXES);
  return { id: vendorId(ctx, index), name, terms: rng.pick(PAYMENT_TERMS), currency };
}

interface AssetType {
  readonly prefix: string;
  readonly name: string;
  readonly crafts: readonly Craft[];
  readonly repairs: readonly string[];
}

const ASSET_TYPES: readonly AssetType[] = [
  {
    prefix: 'PMP',
    name: 'centrifugal pump',
    crafts: ['MECH', 'MILLWRIGHT'],
    repairs: [
      'Replace mechanical seal on {a}',
      'Leaking seal on {a}',
      'Replace impeller on {a}',
      'Realign motor and {a}',
      'High vibration on {a} outboard bearing',
      'Low discharge pressure on {a}',
    ],
  },
  {
    prefix: 'MOT',
    name: 'motor',
    crafts: ['ELEC'],
    repairs: [
      '{a} tripping on overload',
      'Replace bearings on {a}',
      'Megger test {a} after water intrusion',
      '{a} running hot',
      'Replace cooling fan cover on {a}',
    ],
  },
  {
    prefix: 'CMP',
    name: 'air compressor',
    crafts: ['MECH', 'PIPEFIT'],
    repairs: [
      'Air leak at discharge line of {a}',
      '{a} not loading',
      'Replace intake filter and separator on {a}',
      'High discharge temperature alarm on {a}',
    ],
  },
  {
    prefix: 'CNV',
    name: 'conveyor',
    crafts: ['MILLWRIGHT', 'MECH'],
    repairs: [
      'Belt tracking off on {a}',
      'Replace damaged rollers on {a}',
      'Repair belt splice on {a}',
      'Replace drive chain on {a}',
    ],
  },
  {
    prefix: 'BLR',
    name: 'boiler',
    crafts: ['PIPEFIT', 'WELDER'],
    repairs: [
      'Low water cutoff test failed on {a}',
      'Burner flame failure on {a}',
      'Repair steam leak at {a} header',
      'Replace sight glass on {a}',
    ],
  },
  {
    prefix: 'AHU',
    name: 'air handling unit',
    crafts: ['HVAC'],
    repairs: [
      'Replace belts on {a}',
      '{a} not holding temperature',
      'Replace damper actuator on {a}',
      'Clean coils on {a}',
    ],
  },
  {
    prefix: 'FAN',
    name: 'exhaust fan',
    crafts: ['MECH', 'HVAC'],
    repairs: ['Balance {a}', 'Noisy bearings on {a}', 'Replace belt guard on {a}'],
  },
  {
    prefix: 'HX',
    name: 'heat exchanger',
    crafts: ['PIPEFIT'],
    repairs: ['Clean tube bundle of {a}', 'Gasket leak on {a}', 'Pressure test {a}'],
  },
  {
    prefix: 'VLV',
    name: 'control valve',
    crafts: ['INST', 'PIPEFIT'],
    repairs: ['Repack {a}', '{a} sticking', 'Replace positioner on {a}', 'Calibrate {a}'],
  },
  {
    prefix: 'GBX',
    name: 'gearbox',
    crafts: ['MILLWRIGHT'],
    repairs: ['Oil leak at {a} output seal', 'Grinding noise in {a}', 'Replace {a} oil and breather'],
  },
  {
    prefix: 'TNK',
    name: 'storage tank',
    crafts: ['PIPEFIT', 'WELDER'],
    repairs: ['Repair level transmitter on {a}', 'Weld repair on {a} nozzle', 'Replace {a} vent filter'],
  },
  {
    prefix: 'CHL',
    name: 'chiller',
    crafts: ['HVAC', 'ELEC'],
    repairs: ['{a} high head pressure', 'Refrigerant leak check on {a}', 'Replace {a} condenser fan motor'],
  },
];

const LOCATIONS = [
  'Building 1 - Pump Room',
  'Building 2 - Boiler Room',
  'Line 1 - Mixing',
  'Line 2 - Filling',
  'Line 3 - Packaging',
  'Tank Farm',
  'Cooling Tower Yard',
  'Wastewater Treatment',
  'Compressor House',
  'Warehouse B',
  'Roof - AHU Deck',
  'Substation 2',
] as const;

interface Asset {
  readonly id: string;
  readonly type: AssetType;
  readonly location: string;
  /** 'centrifugal pump PMP-1012'. */
  readonly label: string;
}

function asset(ctx: Context, index: number): Asset {
  const rng = ctx.rng(Stream.Asset, index);
  const type = rng.pick(ASSET_TYPES);
  const id = `${type.prefix}-${1001 + index}`;
  return { id, type, location: rng.pick(LOCATIONS), label: `${type.name} ${id}` };
}

// Accounts: a chart of accounts, 'MAJOR-SUB'.
const ACCOUNT_MAJORS: readonly (readonly [string, string])[] = [
  // In order of importance: small charts take the first ones.
  ['5100', 'Maintenance labor'],
  ['5200', 'Maintenance materials'],
  ['5300', 'Contract services'],
  ['1400', 'MRO inventory'],
  ['5150', 'Maintenance overtime'],
  ['5250', 'Lubricants and consumables'],
  ['6100', 'Capital projects'],
  ['5400', 'Utilities - electricity'],
  ['5500', 'Safety and environmental'],
  ['5600', 'Tools and small equipment'],
  ['5350', 'Equipment rental'],
  ['6200', 'Facilities and grounds'],
  ['1500', 'Construction in progress'],
  ['5450', 'Utilities - water and sewer'],
  ['7100', 'Freight and shipping'],
  ['7200', 'Office and administrative'],
];
const DEPARTMENTS = [
  'Mechanical',
  'Electrical',
  'Instrumentation',
  'Facilities',
  'Utilities',
  'Production line 1',
  'Production line 2',
  'Wastewater',
  'Shipping and receiving',
] as const;

interface AccountChart {
  readonly majors: readonly (readonly [string, string])[];
  readonly subs: readonly (readonly [string, string])[];
}

function accountChart(count: number): AccountChart {
  const used = Math.min(ACCOUNT_MAJORS.length, Math.ceil(count / 2));
  const majors = ACCOUNT_MAJORS.slice(0, used).sort((x, y) => (x[0] < y[0] ? -1 : 1));
  const perMajor = Math.ceil(count / used);
  const subs: (readonly [string, string])[] = [];
  for (let k = 0; k < perMajor; k++) {
    if (perMajor <= DEPARTMENTS.length) {
      subs.push([String((k + 1) * 100), at(DEPARTMENTS, k)]);
    } else {
      const code = 100 + Math.floor((k * 900) / perMajor);
      const department = at(DEPARTMENTS, Math.min(DEPARTMENTS.length - 1, Math.floor((code - 100) / 100)));
      subs.push([String(code), `${department}, cost center ${code}`]);
    }
  }
  return { majors, subs };
}

function accountCode(chart: AccountChart, index: number): string {
  const major = at(chart.majors, Math.floor(index / chart.subs.length));
  const sub = at(chart.subs, index % chart.subs.length);
  return `${major[0]}-${sub[0]}`;
}

function accountRow(ctx: Context, chart: AccountChart, index: number): Row {
  const rng = ctx.rng(Stream.Account, index);
  const major = at(chart.majors, Math.floor(index / chart.subs.length));
  const sub = at(chart.subs, index % chart.subs.length);
  const active = !rng.chance(0.08);
  return {
    Account: `${major[0]}-${sub[0]}`,
    Description: rng.chance(0.03) ? null : `${major[1]} - ${sub[1]}`,
    IsActive: active,
  };
}

/** An account for a new record: active ones are preferred (an inactive account is only left from older records). */
function pickAccount(ctx: Context, rng: Rng): number {
  let index = rng.int(0, ctx.counts.accounts - 1);
  for (let tries = 0; tries < 4 && ctx.rng(Stream.Account, index).chance(0.08); tries++)
    index = rng.int(0, ctx.counts.accounts - 1);
  return index;
}

// Parts catalog: a description with a size, category, unit and price range in dollars. `fine` prices have four
// decimals (cheap items priced each); only GAL, L and KG are ordered in half units, and those are priced in cents,
// so quantity × price never needs more than four decimals.
interface CatalogEntry {
  readonly description: string;
  readonly sizes: readonly string[];
  readonly category: string;
  readonly uom: 'EA' | 'BOX' | 'FT' | 'GAL' | 'L' | 'KG';
  readonly price: readonly [number, number];
  readonly fine?: boolean;
  readonly critical?: number;
  readonly mpn: string;
}

const CATALOG: readonly CatalogEntry[] = [
  {
    description: 'Mechanical seal, {s}',
    sizes: ['1 in.', '1-1/4 in.', '1-1/2 in.', '1-3/4 in.', '2 in.', '2-1/2 in.'],
    category: 'Seals',
    uom: 'EA',
    price: [180, 950],
    critical: 0.5,
    mpn: 'MS',
  },
  {
    description: 'Ball bearing {s}',
    sizes: ['6203-2RS', '6204-2RS', '6205-2RS', '6206-ZZ', '6208-2RS', '6310-ZZ'],
    category: 'Bearings',
    uom: 'EA',
    price: [8, 120],
    mpn: 'BB',
  },
  {
    description: 'Spherical roller bearing {s}',
    sizes: ['22210 EK', '22213 EK', '22216 EK', '22220 EK'],
    category: 'Bearings',
    uom: 'EA',
    price: [150, 900],
    critical: 0.3,
    mpn: 'SRB',
  },
  {
    description: 'Pillow block bearing, {s} bore',
    sizes: ['1 in.', '1-3/16 in.', '1-7/16 in.', '1-15/16 in.', '2-3/16 in.'],
    category: 'Bearings',
    uom: 'EA',
    price: [45, 320],
    mpn: 'PB',
  },
  {
    description: 'V-belt, {s}',
    sizes: ['A42', 'A68', 'B52', 'B75', 'BX60', '5V1000'],
    category: 'Power transmission',
    uom: 'EA',
    price: [9, 65],
    mpn: 'VB',
  },
  {
    description: 'Roller chain, ANSI {s}, 10 ft',
    sizes: ['40', '50', '60', '80'],
    category: 'Power transmission',
    uom: 'EA',
    price: [35, 210],
    mpn: 'RC',
  },
  {
    description: 'Coupling insert, {s}',
    sizes: ['L-090', 'L-100', 'L-110', 'L-150'],
    category: 'Power transmission',
    uom: 'EA',
    price: [12, 90],
    mpn: 'CI',
  },
  {
    description: 'O-ring kit, {s}',
    sizes: ['Buna-N', 'Viton', 'EPDM'],
    category: 'Seals',
    uom: 'BOX',
    price: [25, 140],
    mpn: 'ORK',
  },
  {
    description: 'Gasket, spiral wound, {s} 150#',
    sizes: ['1 in.', '2 in.', '3 in.', '4 in.', '6 in.'],
    category: 'Seals',
    uom: 'EA',
    price: [6, 48],
    mpn: 'SWG',
  },
  {
    description: 'Gate valve, {s}, class 150',
    sizes: ['1 in.', '2 in.', '3 in.', '4 in.'],
    category: 'Valves',
    uom: 'EA',
    price: [120, 1400],
    critical: 0.2,
    mpn: 'GV',
  },
  {
    description: 'Ball valve, {s}, stainless',
    sizes: ['1/2 in.', '3/4 in.', '1 in.', '2 in.'],
    category: 'Valves',
    uom: 'EA',
    price: [28, 420],
    mpn: 'BV',
  },
  {
    description: 'Solenoid valve, {s}, 120 VAC',
    sizes: ['1/4 in.', '1/2 in.', '3/4 in.'],
    category: 'Valves',
    uom: 'EA',
    price: [65, 380],
    mpn: 'SV',
  },
  {
    description: 'Pump impeller, {s}',
    sizes: ['6 in.', '8 in.', '10 in.', '12 in.'],
    category: 'Pump parts',
    uom: 'EA',
    price: [320, 2400],
    critical: 0.6,
    mpn: 'IMP',
  },
  {
    description: 'Contactor, 3-pole, {s}',
    sizes: ['18 A', '32 A', '40 A', '65 A'],
    category: 'Electrical',
    uom: 'EA',
    price: [60, 420],
    mpn: 'CT',
  },
  {
    description: 'Fuse, time delay, {s}',
    sizes: ['10 A', '15 A', '30 A', '60 A'],
    category: 'Electrical',
    uom: 'BOX',
    price: [18, 95],
    mpn: 'FTD',
  },
  {
    description: 'Motor, TEFC, {s}',
    sizes: ['1 HP', '5 HP', '10 HP', '25 HP'],
    category: 'Motors',
    uom: 'EA',
    price: [380, 4200],
    critical: 0.4,
    mpn: 'MTR',
  },
  {
    description: 'Wire, THHN, {s}',
    sizes: ['14 AWG', '12 AWG', '10 AWG', '8 AWG'],
    category: 'Electrical',
    uom: 'FT',
    price: [0.12, 1.1],
    fine: true,
    mpn: 'THHN',
  },
  {
    description: 'Proximity sensor, inductive, {s}',
    sizes: ['M12', 'M18', 'M30'],
    category: 'Instrumentation',
    uom: 'EA',
    price: [35, 160],
    mpn: 'PX',
  },
  {
    description: 'Pressure transmitter, {s}',
    sizes: ['0-100 psi', '0-300 psi', '0-1000 psi'],
    category: 'Instrumentation',
    uom: 'EA',
    price: [420, 1800],
    critical: 0.3,
    mpn: 'PT',
  },
  {
    description: 'Thermocouple, type K, {s} probe',
    sizes: ['6 in.', '12 in.', '18 in.'],
    category: 'Instrumentation',
    uom: 'EA',
    price: [28, 140],
    mpn: 'TCK',
  },
  {
    description: 'Filter cartridge, {s}',
    sizes: ['5 micron', '10 micron', '25 micron'],
    category: 'Filters',
    uom: 'EA',
    price: [12, 85],
    mpn: 'FC',
  },
  {
    description: 'Air filter, pleated, {s}',
    sizes: ['20x20x2', '24x24x2', '20x25x4'],
    category: 'Filters',
    uom: 'BOX',
    price: [40, 160],
    mpn: 'AF',
  },
  {
    description: 'Hydraulic oil, {s}',
    sizes: ['ISO VG 32', 'ISO VG 46', 'ISO VG 68'],
    category: 'Lubricants',
    uom: 'GAL',
    price: [9, 28],
    mpn: 'HO',
  },
  {
    description: 'Gear oil, {s}',
    sizes: ['ISO VG 220', 'ISO VG 320', 'ISO VG 460'],
    category: 'Lubricants',
    uom: 'L',
    price: [6, 18],
    mpn: 'GO',
  },
  {
    description: 'Grease, {s}, 14 oz cartridge',
    sizes: ['EP2 lithium complex', 'polyurea', 'food grade H1'],
    category: 'Lubricants',
    uom: 'BOX',
    price: [45, 160],
    mpn: 'GR',
  },
  {
    description: 'Hydraulic hose assembly, {s}',
    sizes: ['1/4 in. x 24 in.', '1/2 in. x 36 in.', '3/4 in. x 48 in.'],
    category: 'Fluid power',
    uom: 'EA',
    price: [28, 160],
    mpn: 'HH',
  },
  {
    description: 'Pipe, carbon steel sch 40, {s}',
    sizes: ['1 in.', '2 in.', '3 in.', '4 in.'],
    category: 'Piping',
    uom: 'FT',
    price: [3.5, 22],
    mpn: 'CS40',
  },
  {
    description: 'Hex bolt, grade 8, {s}',
    sizes: ['3/8-16 x 1-1/2 in.', '1/2-13 x 2 in.', '5/8-11 x 3 in.'],
    category: 'Fasteners',
    uom: 'EA',
    price: [0.35, 2.4],
    fine: true,
    mpn: 'HB8',
  },
  {
    description: 'Welding rod, E7018, {s}',
    sizes: ['3/32 in.', '1/8 in.', '5/32 in.'],
    category: 'Welding',
    uom: 'KG',
    price: [6, 15],
    mpn: 'E7018',
  },
  {
    description: 'Nitrile gloves, size {s}',
    sizes: ['M', 'L', 'XL'],
    category: 'Safety',
    uom: 'BOX',
    price: [9, 22],
    mpn: 'NG',
  },
  {
    description: 'Safety glasses, {s} lens',
    sizes: ['clear', 'smoke', 'amber'],
    category: 'Safety',
    uom: 'BOX',
    price: [30, 70],
    mpn: 'SG',
  },
];

const STOCKROOMS = ['MAIN', 'MAIN', 'MAIN', 'EAST', 'WWTP', 'BOILER'] as const;

/** What other records need of a part: the first draws of its stream, so they are cheap to regenerate. */
interface Part {
  readonly id: string;
  readonly entry: CatalogEntry;
  readonly description: string;
  readonly unitCost: Decimal | null;
}

/** Every item of the catalog: [entry, size]. */
const CATALOG_ITEMS: readonly (readonly [number, string])[] = CATALOG.flatMap((entry, e) =>
  entry.sizes.map((size) => [e, size] as const),
);
/** A step through CATALOG_ITEMS coprime with its length, so that consecutive parts visit every item once per cycle. */
const CATALOG_STRIDE = ((): number => {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  let stride = Math.round(CATALOG_ITEMS.length * 0.618);
  while (gcd(stride, CATALOG_ITEMS.length) !== 1) stride++;
  return stride;
})();

/** Part i is catalog item (offset + i × stride) mod n: distinct descriptions for the first n parts. */
function partItem(ctx: Context, index: number): readonly [number, string] {
  return at(CATALOG_ITEMS, (ctx.partOffset + index * CATALOG_STRIDE) % CATALOG_ITEMS.length);
}

function partKind(ctx: Context, index: number): number {
  return partItem(ctx, index)[0];
}

/** A price in the entry's range: cents, or ten-thousandths for `fine` entries. */
function catalogPrice(rng: Rng, entry: CatalogEntry): Decimal {
  const scale = entry.fine === true ? 4 : 2;
  const factor = 10 ** scale;
  return dec(rng.int(Math.round(entry.price[0] * factor), Math.round(entry.price[1] * factor)), scale);
}

function part(ctx: Context, index: number, rng: Rng = ctx.rng(Stream.Part, index)): Part {
  const [kind, size] = partItem(ctx, index);
  const entry = at(CATALOG, kind);
  const description = entry.description.replace('{s}', size);
  const unitCost = rng.chance(0.04) ? null : catalogPrice(rng, entry);
  return { id: ctx.partId(index), entry, description, unitCost };
}

function partRow(ctx: Context, index: number): Row {
  const rng = ctx.rng(Stream.Part, index);
  const { id, entry, description, unitCost } = part(ctx, index, rng);
  const counted = entry.uom === 'EA' || entry.uom === 'BOX';
  const onHand = counted ? rng.int(0, 40) : rng.int(0, 60) * 10;
  const reorder = rng.chance(0.2) ? null : counted ? rng.int(1, 8) : rng.int(1, 10) * 10;
  const created = slotTime(rng, index, ctx.counts.parts, ctx.now - 6 * 365 * DAY, ctx.txStart - DAY);
  const modified = rng.chance(0.3) ? created : created + Math.floor(rng.next() * (ctx.now - created));
  return {
    PartID: id,
    Description: description,
    Category: entry.category,
    UnitOfMeasure: entry.uom,
    UnitCost: unitCost === null ? null : text(unitCost),
    QuantityOnHand: String(onHand),
    ReorderPoint: reorder === null ? null : String(reorder),
    Stockroom: rng.pick(STOCKROOMS),
    Bin: `${String.fromCharCode(65 + rng.int(0, 7))}-${at(PAD2, rng.int(1, 24))}-${rng.int(1, 6)}`,
    ManufacturerPartNumber: rng.chance(0.1) ? null : `${entry.mpn}-${rng.int(1000, 99999)}${rng.pick(MPN_SUFFIXES)}`,
    PreferredVendorID: rng.chance(0.15) ? null : vendorId(ctx, rng.int(0, ctx.counts.vendors - 1)),
    IsCritical: rng.chance(entry.critical ?? 0.05),
    IsActive: !rng.chance(0.05),
    CreatedDate: iso(created),
    LastModifiedDate: iso(modified),
  };
}

/** A random part of the category (a bounded search over part kinds), or any part. */
function partOfCategory(ctx: Context, rng: Rng, category: string): number {
  let index = rng.int(0, ctx.counts.parts - 1);
  for (let tries = 0; tries < 40; tries++) {
    if (at(CATALOG, partKind(ctx, index)).category === category) return index;
    index = rng.int(0, ctx.counts.parts - 1);
  }
  return index;
}

/** A quantity in hundredths: counts are whole, fluids and weights can be in halves, lengths in tens. */
function quantityFor(rng: Rng, uom: string): number {
  switch (uom) {
    case 'EA':
      return (rng.weighted(QUANTITY_EA) || rng.int(3, 24)) * 100;
    case 'BOX':
      return rng.int(1, 6) * 100;
    case 'FT':
      return rng.int(1, 50) * 1000;
    default:
      return rng.int(2, 110) * 50;
  }
}

// Work orders.
const WORK_TYPE_TEMPLATES: Readonly<Record<string, readonly string[]>> = {
  PM: [
    'Monthly PM - {a}',
    'Quarterly PM - {a}',
    'Annual PM - {a}',
    'Lubrication route - {a}',
    'Semi-annual inspection and service - {a}',
  ],
  INS: ['Vibration analysis - {a}', 'Infrared scan - {a}', 'Operator-reported noise, inspect {a}', 'Inspect {a}'],
  SAF: [
    'Replace missing guard on {a}',
    'Repair emergency stop on {a}',
    'LOTO procedure review - {a}',
    'Repair handrail near {a}',
  ],
  PRJ: [
    'Install VFD on {a}',
    'Upgrade controls on {a}',
    'Replace {a} with high-efficiency unit',
    'Add remote monitoring to {a}',
  ],
};
/** Work on a location rather than an asset: [description, work type, craft]. */
const LOCATION_TEMPLATES: readonly (readonly [string, string, Craft])[] = [
  ['Repair roof leak over {l}', 'CM', 'LABORER'],
  ['Replace lighting in {l}', 'CM', 'ELEC'],
  ['Relamp and clean fixtures - {l}', 'PM', 'ELEC'],
  ['Housekeeping and safety walkdown - {l}', 'SAF', 'LABORER'],
  ['Repair overhead door in {l}', 'CM', 'MECH'],
  ['Replace eyewash station in {l}', 'SAF', 'PIPEFIT'],
  ['Monthly fire extinguisher inspection - {l}', 'INS', 'LABORER'],
];

const REQUEST_COMMENTS = [
  'Reported by operations: unusual noise on night shift.',
  'Operator noticed a small leak during the morning round.',
  'Please coordinate with production before starting; line runs until Friday.',
  'Raised from the PM schedule.',
  'Requested after the last inspection found wear.',
] as const;
const PROGRESS_COMMENTS = [
  'Equipment locked out and tagged out before work started.',
  'Checked alignment with laser tool; within 0.002 in. tolerance.',
  'Found worn bearing on outboard end; replacement in progress.',
  'Vibration readings taken before work; see meter history.',
  'Need scaffold to reach the unit; requested from the contractor.',
  'Parts staged at the job site.',
  'Could not access equipment - line running. Rescheduled for next shift.',
] as const;
const PLANNING_COMMENTS = [
  'Parts checked in stores: available.',
  'Scheduled for the next planned shutdown.',
  'Job plan attached; needs two people.',
  'Approved by area supervisor.',
] as const;
const HOLD_COMMENTS = [
  'On hold: waiting on parts.',
  'On hold until the next planned shutdown.',
  'Waiting on vendor quote for the repair.',
] as const;
const DONE_COMMENTS = [
  'Work completed and tested; returned to operations.',
  'Replaced worn parts, ran for 30 minutes, no leaks.',
  'Completed; area cleaned and guards reinstalled.',
  'Done. Recommend follow-up inspection in 30 days.',
] as const;
const CANCEL_COMMENTS = [
  'Canceled: duplicate of another work order.',
  'Canceled: covered by the upcoming capital project.',
  'Canceled by operations; problem no longer present.',
] as const;

const CLOSED_STATUSES: ReadonlySet<string> = new Set(['COMP', 'CLOSED', 'CAN']);

interface WorkOrderBundle {
  readonly row: Row;
  readonly comments: readonly Row[];
  readonly labor: readonly Row[];
}

function workOrderId(ctx: Context, index: number): string {
  return ctx.sequence('WO-', index, ctx.counts.workOrders);
}

/** The work order's asset index, or undefined for work on a location only. */
function workOrderAsset(ctx: Context, index: number): number | undefined {
  const rng = ctx.rng(Stream.WorkOrderAsset, index);
  return rng.chance(0.93) ? rng.int(0, ctx.counts.assets - 1) : undefined;
}

function workOrderAccount(ctx: Context, index: number): number {
  return pickAccount(ctx, ctx.rng(Stream.WorkOrderAccount, index));
}

function workOrder(ctx: Context, chart: AccountChart, index: number): WorkOrderBundle {
  const rng = ctx.rng(Stream.WorkOrder, index);
  const now = ctx.now;
  const id = workOrderId(ctx, index);
  const requested = floorTo(slotTime(rng, index, ctx.counts.workOrders, ctx.txStart, now - 2 * HOUR), MINUTE);
  const ageDays = (now - requested) / DAY;
  const status =
    ageDays > 45
      ? rng.weighted(WO_STATUS_OLD)
      : ageDays > 10
        ? rng.weighted(WO_STATUS_RECENT)
        : rng.weighted(WO_STATUS_NEW);
  const assetIndex = workOrderAsset(ctx, index);
  const theAsset = assetIndex === undefined ? undefined : asset(ctx, assetIndex);
  const location = theAsset?.location ?? rng.pick(LOCATIONS);
  let description: string;
  let workType: string;
  let craft: Craft;
  if (theAsset === undefined) {
    const [template, type, trade] = rng.pick(LOCATION_TEMPLATES);
    description = template.replace('{l}', location);
    workType = type;
    craft = trade;
  } else {
    workType = rng.weighted(WORK_TYPES);
    const repair = rng.pick(theAsset.type.repairs).replace('{a}', theAsset.label);
    const generic = WORK_TYPE_TEMPLATES[workType];
    description =
      workType === 'CM'
        ? repair
        : workType === 'EM'
          ? `EMERGENCY: ${repair}`
          : rng.pick(generic ?? []).replace('{a}', theAsset.label);
    craft = rng.pick(theAsset.type.crafts);
  }
  description = description.charAt(0).toUpperCase() + description.slice(1);
  const priority =
    workType === 'EM'
      ? 1
      : workType === 'SAF'
        ? rng.int(1, 2)
        : workType === 'CM'
          ? rng.int(2, 4)
          : workType === 'PRJ'
            ? rng.int(4, 5)
            : rng.int(3, 5);
  const crew = TECHNICIANS_BY_CRAFT.get(craft) ?? TECHNICIANS;
  const assignee = status === 'REQ' || (status === 'APPR' && rng.chance(0.5)) ? undefined : rng.pick(crew);
  const targetDays = [1, 3, 7, 14, 30][priority - 1] ?? 7;
  const target = rng.chance(0.1) ? null : floorTo(requested + targetDays * DAY + rng.int(0, 8) * HOUR, HOUR);
  const estimatedUnits = workType === 'PRJ' ? rng.int(16, 160) : rng.int(1, 32);
  const estimated = rng.chance(0.1) ? null : dec(estimatedUnits * 50, 2);
  const created = requested + rng.int(0, 300_000);

  // Labor: reported on work that started.
  const laborCount =
    status === 'COMP' || status === 'CLOSED'
      ? rng.int(1, MAX_LABOR)
      : status === 'INPRG'
        ? rng.int(1, 3)
        : status === 'HOLD'
          ? rng.int(0, 2)
          : 0;
  const labor: Row[] = [];
  let hours = ZERO;
  let overtime = ZERO;
  let lastEnd = requested;
  let lastActivity = created;
  let t = requested + rng.int(1, 72) * HOUR;
  for (let k = 0; k < laborCount; k++) {
    const start = floorTo(t, 15 * MINUTE);
    // Each record does its share of the estimate, give or take (half-hours to twelve hours).
    const quarters =
      estimated === null
        ? rng.int(2, 40)
        : clamp(Math.round((estimatedUnits * 2 * (0.5 + rng.next())) / laborCount), 2, 48);
    const otQuarters = rng.chance(0.2) ? rng.int(1, 16) : 0;
    const end = start + (quarters + otQuarters) * 15 * MINUTE;
    if (end > now - 30 * MINUTE) break;
    const person = assignee !== undefined && rng.chance(0.7) ? assignee : rng.pick(crew);
    const reported = Math.min(end + rng.int(5, 600) * MINUTE + rng.int(0, 59_999), now);
    const laborHours = dec(quarters * 25, 2);
    const laborOvertime = dec(otQuarters * 25, 2);
    hours = addDecimal(hours, laborHours);
    overtime = addDecimal(overtime, laborOvertime);
    labor.push({
      WorkOrderID: id,
      LaborID: guid(rng, index * MAX_LABOR + k, ctx.counts.workOrders * MAX_LABOR),
      PeopleID: person.id,
      Craft: person.craft,
      Hours: text(laborHours),
      OTHours: text(laborOvertime),
      StartDate: iso(start),
      CreatedDate: iso(reported),
    });
    lastEnd = end;
    lastActivity = Math.max(lastActivity, reported);
    t = end + rng.int(1, 48) * HOUR;
  }

  let completed: number | null = null;
  let closedAt = created;
  if (status === 'COMP' || status === 'CLOSED') {
    const after = labor.length > 0 ? lastEnd + rng.int(0, 240) * MINUTE : requested + rng.int(2, 14 * 24) * HOUR;
    completed = floorTo(Math.max(requested, Math.min(after, now - MINUTE)), MINUTE);
    closedAt = status === 'CLOSED' ? Math.min(completed + rng.int(1, 10) * DAY + rng.int(0, DAY), now) : completed;
  } else if (status === 'CAN') {
    closedAt = Math.min(requested + rng.int(1, 20) * DAY + rng.int(0, DAY), now);
  } else if (status !== 'REQ') {
    closedAt = created + Math.floor(rng.next() * Math.min(now - created, 20 * DAY));
  }
  lastActivity = Math.max(lastActivity, closedAt);

  // Comments, oldest first, within the life of the work order.
  const comments: Row[] = [];
  const commentCount = rng.weighted(COMMENT_COUNTS);
  const windowStart = requested + 10 * MINUTE;
  const windowEnd = CLOSED_STATUSES.has(status) ? Math.max(closedAt, completed ?? 0) : now - 5 * MINUTE;
  if (windowEnd > windowStart) {
    const times: number[] = [];
    for (let k = 0; k < commentCount; k++) times.push(windowStart + Math.floor(rng.next() * (windowEnd - windowStart)));
    times.sort((x, y) => x - y);
    const started = status !== 'REQ' && status !== 'APPR' && status !== 'SCHED';
    times.forEach((time, k) => {
      const last = k === times.length - 1;
      let comment: string;
      let author: string;
      if (last && (status === 'COMP' || status === 'CLOSED')) {
        comment = rng.pick(DONE_COMMENTS);
        author = (assignee ?? rng.pick(crew)).id;
      } else if (last && status === 'CAN') {
        comment = rng.pick(CANCEL_COMMENTS);
        author = rng.pick(REQUESTERS);
      } else if (last && status === 'HOLD') {
        comment = rng.pick(HOLD_COMMENTS);
        author = (assignee ?? rng.pick(crew)).id;
      } else if (k === 0) {
        comment = rng.pick(REQUEST_COMMENTS);
        author = rng.pick(REQUESTERS);
      } else if (started) {
        comment = rng.pick(PROGRESS_COMMENTS);
        author = (assignee ?? rng.pick(crew)).id;
      } else {
        comment = rng.pick(PLANNING_COMMENTS);
        author = rng.pick(REQUESTERS);
      }
      comments.push({ WorkOrderID: id, CommentID: k + 1, Comment: comment, Username: author, CreatedDate: iso(time) });
      lastActivity = Math.max(lastActivity, time);
    });
  }

  const row: Row = {
    WorkOrderID: id,
    Description: description,
    Status: status,
    Priority: priority,
    WorkType: workType,
    AssetID: theAsset?.id ?? null,
    Location: location,
    RequestedBy: rng.pick(REQUESTERS),
    RequestedDate: iso(requested),
    TargetDate: target === null ? null : iso(target),
    CompletedDate: completed === null ? null : iso(completed),
    AssignedTo: assignee?.id ?? null,
    Craft: craft,
    EstimatedHours: estimated === null ? null : text(estimated),
    ActualHours: text(hours),
    ActualOTHours: text(overtime),
    Account: accountCode(chart, workOrderAccount(ctx, index)),
    IsOpen: !CLOSED_STATUSES.has(status),
    CreatedDate: iso(created),
    LastModifiedDate: iso(Math.min(Math.max(lastActivity, created), now)),
  };
  return { row, comments, labor };
}

// Purchase requests.
const NON_STOCK_ITEMS: readonly (readonly [string, number, number])[] = [
  ['Machined shaft sleeve per drawing D-{n}', 180, 950],
  ['Fabricated guard per sketch SK-{n}', 250, 1800],
  ['Rewind motor, shop order {n}', 900, 4800],
  ['Rebuild gearbox, shop order {n}', 1500, 7500],
  ['Custom gasket set per drawing D-{n}', 45, 320],
];
const SERVICES: readonly (readonly [string, number, number])[] = [
  ['Crane rental, 40-ton, per day', 900, 2400],
  ['Calibration service, pressure gauges', 350, 1200],
  ['Scaffold erection and removal', 800, 5200],
  ['Vibration survey, contractor', 600, 2200],
  ['Boiler inspection, insurance carrier', 450, 1500],
  ['Hydro-excavation, per hour', 180, 380],
];
const PR_NOTES = [
  'Quote attached from vendor.',
  'Urgent - line down.',
  'Please expedite.',
  'Price per last PO.',
  'Deliver to maintenance shop, attention planner.',
  'Approved by plant manager on the phone.',
] as const;
const PO_NOTES = [
  'Confirm ship date by email.',
  'Partial shipments accepted.',
  'Include packing slip with PO number.',
  'Deliver between 7:00 and 15:00 only.',
  'Freight prepaid and added.',
  'Call buyer before substituting.',
] as const;
const SHIP_TO = [
  'Main Plant - Receiving Dock 1',
  'Main Plant - Receiving Dock 2',
  'Central Stores',
  'Wastewater Treatment Plant',
  'Powerhouse',
  'Warehouse B - Door 4',
] as const;

/** What a PR line holds, reused when a PO is raised from the request. */
interface LineSeed {
  readonly partId: string | null;
  readonly description: string;
  readonly uom: string;
  /** Hundredths. */
  readonly quantity: number;
  readonly price: Decimal | null;
  readonly account: string | null;
  readonly workOrderId: string | null;
  /** A PR line's status. */
  readonly status: string;
}

/** A copy of the line with other values (written out: object spread is slow on this path). */
function reseed(
  base: LineSeed,
  quantity: number,
  price: Decimal | null,
  account: string | null,
  workOrderId: string | null,
  status = base.status,
): LineSeed {
  return {
    partId: base.partId,
    description: base.description,
    uom: base.uom,
    quantity,
    price,
    account,
    workOrderId,
    status,
  };
}

interface PurchaseRequestBundle {
  readonly row: Row;
  readonly lines: readonly Row[];
  readonly seeds: readonly LineSeed[];
  readonly status: string;
  readonly requested: number;
  readonly vendorIndex: number | null;
  readonly account: string | null;
}

function stockLine(ctx: Context, rng: Rng, partIndex: number): LineSeed {
  const p = part(ctx, partIndex);
  return {
    partId: p.id,
    description: p.description,
    uom: p.entry.uom,
    quantity: quantityFor(rng, p.entry.uom),
    price: p.unitCost,
    account: null,
    workOrderId: null,
    status: 'Open',
  };
}

function nonStockLine(rng: Rng, items: readonly (readonly [string, number, number])[], priced: boolean): LineSeed {
  const [template, low, high] = rng.pick(items);
  return {
    partId: null,
    description: template.replace('{n}', String(rng.int(1000, 9999))),
    uom: 'EA',
    quantity: (template.includes('per day') || template.includes('per hour') ? rng.int(1, 8) : 1) * 100,
    price: priced ? dec(rng.int(low * 100, high * 100), 2) : null,
    account: null,
    workOrderId: null,
    status: 'Open',
  };
}

/** quantity × price, which the catalog keeps within four decimals (money's scale). */
function extended(quantity: Decimal, price: Decimal): Decimal {
  const product = mulDecimal(quantity, price);
  if (scaleOf(product) > 4) throw new Error(`demo: ${text(quantity)} × ${text(price)} needs more than 4 decimals`);
  return product;
}

function purchaseRequestNumber(ctx: Context, index: number): string {
  return ctx.sequence('PR-', index, ctx.counts.purchaseRequests);
}

function purchaseRequest(ctx: Context, chart: AccountChart, index: number): PurchaseRequestBundle {
  const rng = ctx.rng(Stream.PurchaseRequest, index);
  const now = ctx.now;
  const counts = ctx.counts;
  const number = purchaseRequestNumber(ctx, index);
  const requested = slotTime(rng, index, counts.purchaseRequests, ctx.txStart, now - 3 * HOUR);
  const ageDays = (now - requested) / DAY;
  const status =
    ageDays > 30
      ? rng.weighted(PR_STATUS_OLD)
      : ageDays > 7
        ? rng.weighted(PR_STATUS_RECENT)
        : rng.weighted(PR_STATUS_NEW);
  const kind = rng.weighted(PR_KINDS);
  // The work order a request is for was raised a little earlier.
  const woIndex = clamp(
    Math.floor(((index + 0.5) / counts.purchaseRequests) * counts.workOrders) - rng.int(1, 4),
    0,
    counts.workOrders - 1,
  );
  const linked = kind === 'workOrder' || (kind === 'service' && rng.chance(0.4));
  const woId = linked ? workOrderId(ctx, woIndex) : null;
  const woAsset = linked ? workOrderAsset(ctx, woIndex) : undefined;
  const assetLabel = woAsset === undefined ? undefined : asset(ctx, woAsset).label;
  const account = linked
    ? accountCode(chart, workOrderAccount(ctx, woIndex))
    : rng.chance(0.1)
      ? null
      : accountCode(chart, pickAccount(ctx, rng));
  const stockroom = rng.pick(STOCKROOMS);
  let description: string | null;
  if (kind === 'workOrder') {
    description =
      assetLabel === undefined
        ? `Materials for ${woId}`
        : rng
            .pick(['Parts for {w} - {a}', 'Repair parts for {a} ({w})', 'Materials for {w}, {a}'] as const)
            .replace('{w}', woId ?? '')
            .replace('{a}', assetLabel);
  } else if (kind === 'stock') {
    description = rng.pick([
      `Stock replenishment - ${stockroom} stores`,
      'Reorder items below minimum',
      'Quarterly restock - consumables',
    ]);
  } else {
    description = woId === null ? 'Outside services' : `Outside services for ${woId}`;
  }
  if (rng.chance(0.05)) description = null;
  const vendorIndex = rng.chance(0.65) ? rng.int(0, counts.vendors - 1) : null;
  const required = requested + rng.int(3, 45) * DAY;
  const created = requested;
  const lineCount = rng.weighted(PR_LINE_COUNTS);
  const lineStatus = (k: number): string =>
    status === 'Ordered' || status === 'Closed'
      ? k > 0 && rng.chance(0.08)
        ? 'Canceled'
        : 'Ordered'
      : status === 'Rejected' || status === 'Canceled'
        ? 'Canceled'
        : 'Open';
  let modified =
    status === 'Draft'
      ? created + rng.int(0, 4 * HOUR)
      : created + HOUR + Math.floor(rng.next() * Math.min(now - created - HOUR, 20 * DAY));
  const seeds: LineSeed[] = [];
  const lineTimes: number[] = [];
  for (let k = 0; k < lineCount; k++) {
    const seed =
      kind === 'service'
        ? nonStockLine(rng, SERVICES, rng.chance(0.8))
        : kind === 'workOrder' && rng.chance(0.15)
          ? nonStockLine(rng, NON_STOCK_ITEMS, rng.chance(0.6))
          : stockLine(ctx, rng, rng.int(0, counts.parts - 1));
    seeds.push(reseed(seed, seed.quantity, seed.price, account, woId, lineStatus(k)));
    lineTimes.push((lineTimes.at(-1) ?? created) + rng.int(5_000, 90_000));
  }
  modified = Math.min(Math.max(modified, ...lineTimes), now);
  const requiredDate = isoDate(required);
  const lines = seeds.map((seed, k): Row => {
    const quantity = dec(seed.quantity, 2);
    const lineCreated = at(lineTimes, k);
    return {
      PRNumber: number,
      LineNumber: k + 1,
      PartID: seed.partId,
      Description: seed.description,
      Quantity: text(quantity),
      UnitOfMeasure: seed.uom,
      EstimatedUnitCost: seed.price === null ? null : text(seed.price),
      ExtendedCost: seed.price === null ? null : text(extended(quantity, seed.price)),
      Account: seed.account,
      WorkOrderID: seed.workOrderId,
      RequiredDate: requiredDate,
      Status: seed.status,
      CreatedDate: iso(lineCreated),
      LastModifiedDate: iso(Math.max(lineCreated, modified)),
    };
  });
  const row: Row = {
    PRNumber: number,
    Description: description,
    Status: status,
    Priority: rng.weighted(PR_PRIORITIES),
    RequestedBy: rng.pick(PR_REQUESTERS),
    RequestedDate: iso(requested),
    RequiredDate: requiredDate,
    WorkOrderID: woId,
    Account: account,
    SuggestedVendorID: vendorIndex === null ? null : vendorId(ctx, vendorIndex),
    Notes: rng.chance(0.3) ? rng.pick(PR_NOTES) : null,
    CreatedDate: iso(created),
    LastModifiedDate: iso(modified),
  };
  return { row, lines, seeds, status, requested, vendorIndex, account };
}

// Blanket purchase orders.
const BLANKET_CATEGORIES = [
  'Bearings',
  'Power transmission',
  'Seals',
  'Electrical',
  'Fasteners',
  'Lubricants',
  'Filters',
  'Safety',
  'Instrumentation',
  'Valves',
] as const;

interface BlanketBundle {
  readonly row: Row;
  readonly lines: readonly Row[];
  readonly status: string;
  readonly vendorIndex: number;
  readonly account: string | null;
  readonly startDate: string;
  readonly endDate: string | null;
  readonly items: readonly { readonly line: number; readonly seed: LineSeed; readonly active: boolean }[];
}

function blanketNumber(ctx: Context, index: number): string {
  return ctx.sequence('BPO-', index, ctx.counts.blanketPOs);
}

function blanketPO(ctx: Context, chart: AccountChart, index: number): BlanketBundle {
  const rng = ctx.rng(Stream.BlanketPO, index);
  const now = ctx.now;
  const number = blanketNumber(ctx, index);
  const created = slotTime(rng, index, ctx.counts.blanketPOs, now - 1095 * DAY, now - 10 * DAY);
  const start = floorTo(created, DAY) + rng.int(0, 14) * DAY;
  const years = rng.int(1, 2);
  const end = rng.chance(0.1) ? null : start + (years * 365 - 1) * DAY;
  const startDate = isoDate(start);
  const endDate = end === null ? null : isoDate(end);
  const today = isoDate(now);
  const status =
    endDate !== null && endDate < today
      ? rng.weighted(BLANKET_STATUS_ENDED)
      : startDate > today
        ? rng.weighted(BLANKET_STATUS_FUTURE)
        : rng.weighted([
            ['Active', 85],
            ['Exhausted', 7],
            ['Canceled', 3],
            ['Draft', now - created < 30 * DAY ? 5 : 0],
          ] as const);
  const category = rng.pick(BLANKET_CATEGORIES);
  const vendorIndex = rng.int(0, ctx.counts.vendors - 1);
  const theVendor = vendor(ctx, vendorIndex);
  const account = rng.chance(0.1) ? null : accountCode(chart, pickAccount(ctx, rng));
  const lineCount = rng.int(1, 6);
  const items: { line: number; seed: LineSeed; active: boolean }[] = [];
  const lines: Row[] = [];
  let modified = created + Math.floor(rng.next() * Math.min(now - created, 90 * DAY));
  const used = new Set<number>();
  let lastLine = created;
  for (let k = 0; k < lineCount; k++) {
    const partIndex = partOfCategory(ctx, rng, category);
    if (used.has(partIndex)) continue;
    used.add(partIndex);
    const p = part(ctx, partIndex);
    // The agreed price: the list price less 5-15%, at the list price's own precision.
    const listPrice = p.unitCost ?? catalogPrice(rng, p.entry);
    const price = roundTo(mulDecimal(listPrice, dec(rng.int(85, 95), 2)), p.entry.fine === true ? 4 : 2);
    const maxQuantity = rng.chance(0.4) ? null : dec(rng.int(2, 100) * (p.entry.uom === 'FT' ? 10000 : 1000), 2);
    const active = status === 'Active' || status === 'Draft' ? !rng.chance(0.1) : !rng.chance(0.5);
    const lineCreated = (lastLine = lastLine + rng.int(5_000, 120_000));
    const line = lines.length + 1;
    const lineModified = Math.min(Math.max(lineCreated, active ? lineCreated : modified), now);
    modified = Math.max(modified, lineModified);
    items.push({
      line,
      seed: reseed(stockSeedOf(p), 100, price, account, null),
      active,
    });
    lines.push({
      BlanketPONumber: number,
      LineNumber: line,
      PartID: p.id,
      Description: p.description,
      UnitOfMeasure: p.entry.uom,
      UnitPrice: text(price),
      MaxQuantity: maxQuantity === null ? null : text(maxQuantity),
      IsActive: active,
      Account: account,
      CreatedDate: iso(lineCreated),
      LastModifiedDate: iso(lineModified),
    });
  }
  const row: Row = {
    BlanketPONumber: number,
    VendorID: theVendor.id,
    Description: rng.chance(0.05)
      ? null
      : rng
          .pick(['Supply agreement - {c}', 'MRO blanket - {c}', '{c} supply, {y}'] as const)
          .replace('{c}', category)
          .replace(
            '{y}',
            years === 1 ? startDate.slice(0, 4) : `${startDate.slice(0, 4)}-${Number(startDate.slice(0, 4)) + 1}`,
          ),
    Status: status,
    StartDate: startDate,
    EndDate: endDate,
    LimitAmount: text(dec(rng.int(5, 250) * 1000, 0)),
    Currency: theVendor.currency,
    Buyer: rng.pick(BUYERS),
    PaymentTerms: theVendor.terms,
    Account: account,
    CreatedDate: iso(created),
    LastModifiedDate: iso(Math.min(modified, now)),
  };
  return { row, lines, status, vendorIndex, account, startDate, endDate, items };
}

function stockSeedOf(p: Part): LineSeed {
  return {
    partId: p.id,
    description: p.description,
    uom: p.entry.uom,
    quantity: 100,
    price: p.unitCost,
    account: null,
    workOrderId: null,
    status: 'Open',
  };
}

// Purchase orders, their lines and attachments.
interface PurchaseOrderBundle {
  readonly row: Row;
  readonly lines: readonly Row[];
  readonly attachments: readonly Row[];
}

function purchaseOrder(ctx: Context, chart: AccountChart, index: number): PurchaseOrderBundle {
  const rng = ctx.rng(Stream.PurchaseOrder, index);
  const now = ctx.now;
  const counts = ctx.counts;
  const number = ctx.sequence('PO-', index, counts.purchaseOrders);
  const created = slotTime(rng, index, counts.purchaseOrders, ctx.txStart + 2 * DAY, now - 2 * HOUR);
  const orderDate = isoDate(created);
  const source = rng.weighted(PO_SOURCES);
  let seeds: LineSeed[] = [];
  let prNumber: string | null = null;
  let blanket: string | null = null;
  let vendorIndex: number | null = null;
  let account: string | null | undefined;
  if (source === 'request') {
    const j = Math.floor((index / counts.purchaseOrders) * counts.purchaseRequests) - rng.int(1, 4);
    if (j >= 0) {
      const pr = purchaseRequest(ctx, chart, j);
      const ordered = pr.seeds.filter((s) => s.status === 'Ordered');
      if ((pr.status === 'Ordered' || pr.status === 'Closed') && pr.requested < created && ordered.length > 0) {
        prNumber = purchaseRequestNumber(ctx, j);
        vendorIndex = pr.vendorIndex;
        account = pr.account;
        seeds = ordered.map((s) =>
          reseed(
            s,
            s.quantity,
            s.price ?? (s.partId === null ? dec(rng.int(5000, 500000), 2) : dec(rng.int(500, 50000), 2)),
            s.account,
            s.workOrderId,
          ),
        );
      }
    }
  } else if (source === 'blanket' && counts.blanketPOs > 0) {
    for (let tries = 0; tries < 3 && blanket === null; tries++) {
      const b = rng.int(0, counts.blanketPOs - 1);
      const bpo = blanketPO(ctx, chart, b);
      const usable =
        bpo.status === 'Active' || bpo.status === 'Exhausted' || bpo.status === 'Expired' || bpo.status === 'Closed';
      const active = bpo.items.filter((item) => item.active);
      if (
        usable &&
        active.length > 0 &&
        bpo.startDate <= orderDate &&
        (bpo.endDate === null || orderDate <= bpo.endDate)
      ) {
        blanket = blanketNumber(ctx, b);
        vendorIndex = bpo.vendorIndex;
        account = bpo.account;
        const take = rng.int(1, Math.min(3, active.length));
        seeds = active
          .slice(0, take)
          .map((item) => reseed(item.seed, quantityFor(rng, item.seed.uom), item.seed.price, item.seed.account, null));
      }
    }
  }
  if (seeds.length === 0) {
    const lineCount = rng.int(1, 5);
    const woLinked = rng.chance(0.25);
    const woIndex = clamp(
      Math.floor((index / counts.purchaseOrders) * counts.workOrders) - rng.int(1, 5),
      0,
      counts.workOrders - 1,
    );
    for (let k = 0; k < lineCount; k++) {
      const seed = stockLine(ctx, rng, rng.int(0, counts.parts - 1));
      const price =
        seed.price === null ? catalogPrice(rng, at(CATALOG, partKind(ctx, rng.int(0, counts.parts - 1)))) : seed.price;
      seeds.push(
        reseed(
          seed,
          seed.quantity,
          seed.uom === 'GAL' || seed.uom === 'L' || seed.uom === 'KG' ? roundTo(price, 2) : price,
          woLinked ? accountCode(chart, workOrderAccount(ctx, woIndex)) : null,
          woLinked ? workOrderId(ctx, woIndex) : null,
        ),
      );
    }
  }
  if (account === undefined) account = rng.chance(0.1) ? null : accountCode(chart, pickAccount(ctx, rng));
  vendorIndex ??= rng.int(0, counts.vendors - 1);
  const theVendor = vendor(ctx, vendorIndex);

  const ageDays = (now - created) / DAY;
  const status =
    ageDays > 40
      ? rng.weighted(PO_STATUS_OLD)
      : ageDays > 10
        ? rng.weighted(PO_STATUS_RECENT)
        : rng.weighted(PO_STATUS_NEW);
  const leadDays = rng.int(3, 30);
  const expected = created + leadDays * DAY;
  const receivedAt = Math.max(
    created + HOUR,
    Math.min(floorTo(expected, DAY) + rng.int(-2, 5) * DAY + rng.int(7, 15) * HOUR, now - HOUR),
  );
  const received = status === 'PartiallyReceived' || status === 'Received' || status === 'Closed';
  let modified =
    status === 'Draft'
      ? created + rng.int(0, 2 * HOUR)
      : created + HOUR + Math.floor(rng.next() * Math.min(now - created - HOUR, 10 * DAY));
  if (received) modified = Math.max(modified, receivedAt);
  if (status === 'Closed') modified = Math.max(modified, Math.min(receivedAt + rng.int(1, 30) * DAY, now));

  let taxable = ZERO;
  const lines: Row[] = [];
  let lastLine = created;
  seeds.forEach((seed, k) => {
    const quantity = dec(seed.quantity, 2);
    const price = seed.price ?? dec(100, 2);
    const amount = extended(quantity, price);
    let lineStatus: string;
    let receivedUnits = 0;
    if (status === 'Canceled') lineStatus = 'Canceled';
    else if (status === 'Received' || status === 'Closed') {
      lineStatus = 'Received';
      receivedUnits = seed.quantity;
    } else if (status === 'PartiallyReceived') {
      const step = seed.quantity % 100 === 0 ? 100 : 50;
      const steps = seed.quantity / step;
      const choice = k === 0 ? 'PartiallyReceived' : rng.pick(PARTIAL_LINE_STATUSES);
      if (choice === 'Received') {
        lineStatus = 'Received';
        receivedUnits = seed.quantity;
      } else if (choice === 'PartiallyReceived' && steps >= 2) {
        lineStatus = 'PartiallyReceived';
        receivedUnits = rng.int(1, steps - 1) * step;
      } else lineStatus = 'Open';
    } else lineStatus = 'Open';
    const taxed = seed.partId !== null && rng.chance(0.35);
    if (taxed && lineStatus !== 'Canceled') taxable = addDecimal(taxable, amount);
    const lineCreated = (lastLine = lastLine + rng.int(5_000, 90_000));
    const lineModified = Math.min(
      Math.max(lineCreated, receivedUnits > 0 ? receivedAt : lineStatus === 'Canceled' ? modified : lineCreated),
      now,
    );
    modified = Math.max(modified, lineModified);
    lines.push({
      PONumber: number,
      LineNumber: k + 1,
      PartID: seed.partId,
      Description: seed.description,
      QuantityOrdered: text(quantity),
      QuantityReceived: text(dec(receivedUnits, 2)),
      UnitOfMeasure: seed.uom,
      UnitPrice: text(price),
      ExtendedPrice: text(amount),
      IsTaxable: taxed,
      Account: seed.account ?? account,
      WorkOrderID: seed.workOrderId,
      DueDate: isoDate(expected),
      Status: lineStatus,
      CreatedDate: iso(lineCreated),
      LastModifiedDate: iso(lineModified),
    });
  });

  // Attachments: a quote when ordering; packing slips and invoices once goods arrive.
  const attachments: Row[] = [];
  const documents: ('Quote' | 'PackingSlip' | 'Invoice' | 'Other')[] = [];
  if (rng.chance(0.4)) documents.push('Quote');
  if (received && rng.chance(0.7)) documents.push('PackingSlip');
  if ((status === 'Received' || status === 'Closed') && rng.chance(0.6)) documents.push('Invoice');
  if (documents.length < MAX_ATTACHMENTS && rng.chance(0.1)) documents.push('Other');
  documents.slice(0, MAX_ATTACHMENTS).forEach((documentType, k) => {
    const stamp = orderDate.replaceAll('-', '');
    let fileName: string;
    let contentType: string;
    let size: number;
    let description: string | null;
    let uploadedBy: string;
    let uploaded: number;
    if (documentType === 'Quote') {
      fileName = `Quote_${theVendor.id}_${stamp}.pdf`;
      contentType = 'application/pdf';
      size = rng.int(40_000, 900_000);
      description = rng.chance(0.2) ? null : `Vendor quote from ${theVendor.name}`;
      uploadedBy = rng.pick(BUYERS);
      uploaded = created + rng.int(2, 240) * MINUTE;
    } else if (documentType === 'PackingSlip') {
      const photo = rng.chance(0.25);
      fileName = photo ? `IMG_${rng.int(1000, 9999)}.jpg` : `PackingSlip_${number}.pdf`;
      contentType = photo ? 'image/jpeg' : 'application/pdf';
      size = photo ? rng.int(900_000, 4_800_000) : rng.int(60_000, 600_000);
      description = photo
        ? 'Photo of packing slip at the dock'
        : status === 'PartiallyReceived'
          ? 'Packing slip, partial shipment'
          : 'Packing slip';
      uploadedBy = rng.pick(RECEIVING_CLERKS);
      uploaded = receivedAt + rng.int(5, 180) * MINUTE;
    } else if (documentType === 'Invoice') {
      const invoice = rng.int(100_000, 999_999);
      fileName = `INV-${invoice}.pdf`;
      contentType = 'application/pdf';
      size = rng.int(50_000, 400_000);
      description = `Invoice ${invoice}`;
      uploadedBy = rng.pick(PAYABLES_CLERKS);
      uploaded = receivedAt + rng.int(1, 20) * DAY;
    } else {
      const sheet = rng.chance(0.5);
      fileName = sheet ? `Pricing_${theVendor.id}.xlsx` : `Spec_sheet_${number}.pdf`;
      contentType = sheet ? 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' : 'application/pdf';
      size = sheet ? rng.int(12_000, 220_000) : rng.int(80_000, 2_500_000);
      description = rng.chance(0.5) ? null : sheet ? 'Vendor price list' : 'Technical data sheet';
      uploadedBy = rng.pick(BUYERS);
      uploaded = created + rng.int(1, 72) * HOUR;
    }
    uploaded = Math.max(created, Math.min(uploaded, now));
    modified = Math.max(modified, uploaded);
    attachments.push({
      AttachmentID: guid(rng, index * MAX_ATTACHMENTS + k, counts.purchaseOrders * MAX_ATTACHMENTS),
      PONumber: number,
      FileName: fileName,
      ContentType: contentType,
      SizeBytes: size,
      DocumentType: documentType,
      Description: description,
      UploadedBy: uploadedBy,
      CreatedDate: iso(uploaded),
      LastModifiedDate: iso(uploaded),
    });
  });

  const row: Row = {
    PONumber: number,
    VendorID: theVendor.id,
    VendorName: theVendor.name,
    Status: status,
    OrderDate: iso(created),
    ExpectedDeliveryDate: isoDate(expected),
    Buyer: rng.pick(BUYERS),
    ShipTo: rng.pick(SHIP_TO),
    PaymentTerms: theVendor.terms,
    Currency: theVendor.currency,
    FreightAmount: rng.chance(0.4) ? null : rng.chance(0.25) ? '0' : text(dec(rng.int(1500, 45000), 2)),
    TaxAmount: text(roundTo(mulDecimal(taxable, SALES_TAX_RATE), 2)),
    PRNumber: prNumber,
    BlanketPONumber: blanket,
    Account: account,
    Notes: rng.chance(0.25) ? rng.pick(PO_NOTES) : null,
    CreatedDate: iso(created),
    LastModifiedDate: iso(Math.min(modified, now)),
  };
  return { row, lines, attachments };
}

// Meters and their readings.
interface MeterKind {
  readonly name: string;
  readonly unit: string;
  /** A running total (hours, gallons...) or a gauge around a base value. */
  readonly cumulative: boolean;
  /** Gauge: the range of the base value; cumulative: the range of the starting total. */
  readonly base: readonly [number, number];
  /** Gauge: relative noise; cumulative: the range of the daily increase. */
  readonly perDay?: readonly [number, number];
  readonly noise?: number;
  /** Digits after the point the meter shows (at most 2: the reading's scale). */
  readonly decimals: number;
  readonly assetPrefixes: readonly string[];
}

const METER_KINDS: readonly MeterKind[] = [
  {
    name: 'Run hours',
    unit: 'HRS',
    cumulative: true,
    base: [100, 40000],
    perDay: [8, 24],
    decimals: 1,
    assetPrefixes: [],
  },
  {
    name: 'Discharge pressure',
    unit: 'PSI',
    cumulative: false,
    base: [40, 150],
    noise: 0.08,
    decimals: 1,
    assetPrefixes: ['PMP', 'CMP'],
  },
  {
    name: 'Bearing temperature',
    unit: 'DEGF',
    cumulative: false,
    base: [95, 170],
    noise: 0.06,
    decimals: 1,
    assetPrefixes: ['PMP', 'MOT', 'FAN', 'GBX'],
  },
  {
    name: 'Vibration velocity',
    unit: 'IN/S',
    cumulative: false,
    base: [0.05, 0.45],
    noise: 0.3,
    decimals: 2,
    assetPrefixes: ['PMP', 'MOT', 'FAN', 'GBX', 'CMP'],
  },
  {
    name: 'Motor current',
    unit: 'AMPS',
    cumulative: false,
    base: [10, 120],
    noise: 0.1,
    decimals: 1,
    assetPrefixes: ['MOT', 'CNV', 'CHL'],
  },
  {
    name: 'Flow totalizer',
    unit: 'GAL',
    cumulative: true,
    base: [100000, 50000000],
    perDay: [2000, 60000],
    decimals: 0,
    assetPrefixes: ['PMP', 'TNK', 'HX'],
  },
  {
    name: 'Energy',
    unit: 'KWH',
    cumulative: true,
    base: [10000, 5000000],
    perDay: [200, 6000],
    decimals: 0,
    assetPrefixes: ['MOT', 'CHL', 'AHU', 'CMP'],
  },
  {
    name: 'Cycle count',
    unit: 'CYCLES',
    cumulative: true,
    base: [1000, 2000000],
    perDay: [50, 2000],
    decimals: 0,
    assetPrefixes: ['VLV', 'CNV'],
  },
  {
    name: 'Steam pressure',
    unit: 'PSI',
    cumulative: false,
    base: [80, 150],
    noise: 0.05,
    decimals: 1,
    assetPrefixes: ['BLR'],
  },
  {
    name: 'Supply air temperature',
    unit: 'DEGF',
    cumulative: false,
    base: [52, 60],
    noise: 0.04,
    decimals: 1,
    assetPrefixes: ['AHU', 'CHL'],
  },
];

const READING_EVENTS: readonly (readonly [string | null, number])[] = [
  ['Operator round', 40],
  ['PM route', 20],
  ['Shift reading', 20],
  ['Alarm', 4],
  ['After repair', 4],
  [null, 12],
];

interface MeterBundle {
  readonly row: Row;
  readonly history: readonly Row[];
}

function meter(ctx: Context, index: number): MeterBundle {
  const rng = ctx.rng(Stream.Meter, index);
  const now = ctx.now;
  const id = ctx.sequence('MTR-', index, ctx.counts.meters, 5);
  const theAsset = asset(ctx, index % ctx.counts.assets);
  const fitting = METER_KINDS.filter(
    (kind) => kind.assetPrefixes.length === 0 || kind.assetPrefixes.includes(theAsset.type.prefix),
  );
  const kind = rng.pick(fitting);
  const description = `${kind.name} - ${theAsset.label}`;
  const created = slotTime(rng, index, ctx.counts.meters, ctx.txStart, now - 20 * DAY);
  const readings = rng.int(1, 9);
  const first = floorTo(created + rng.int(0, 72) * HOUR, MINUTE);
  const span = now - HOUR - first;
  const step = 10 ** (2 - kind.decimals);
  const base = kind.base[0] + rng.next() * (kind.base[1] - kind.base[0]);
  const history: Row[] = [];
  let value = base;
  let previous = first;
  let lastCreated = created;
  for (let k = 0; k < readings; k++) {
    const time = k === 0 ? first : floorTo(first + (span * (k + 0.1 + 0.8 * rng.next())) / readings, MINUTE);
    if (kind.cumulative) {
      const [low, high] = kind.perDay ?? [1, 1];
      value += ((time - previous) / DAY) * (low + rng.next() * (high - low));
    } else {
      value = base * (1 + (kind.noise ?? 0) * (2 * rng.next() - 1));
    }
    previous = time;
    // Hundredths, rounded to what the meter shows.
    const units = Math.max(step, Math.round((value * 100) / step) * step);
    const recorded = Math.min(time + rng.int(0, 120) * MINUTE + rng.int(0, 59_999), now);
    lastCreated = Math.max(lastCreated, recorded);
    history.push({
      MeterID: id,
      ReadingID: k + 1,
      Description: description,
      MeterReading: text(dec(units, 2)),
      Unit: kind.unit,
      ReadingDate: iso(time),
      Event: rng.weighted(READING_EVENTS),
      CreatedDate: iso(recorded),
    });
  }
  const newest = at(history, history.length - 1);
  const row: Row = {
    MeterID: id,
    Description: newest.Description,
    MeterReading: newest.MeterReading,
    Unit: newest.Unit,
    ReadingDate: newest.ReadingDate,
    Event: newest.Event,
    CreatedDate: iso(Math.min(created, Date.parse(String(at(history, 0).CreatedDate)))),
    LastModifiedDate: iso(lastCreated),
  };
  return { row, history };
}

// ---------------------------------------------------------------------------------------------------------------
// The API.

function contextOf(options: DemoOptions | undefined): Context {
  const seed = options?.seed ?? defaultDemoSeed;
  if (!Number.isSafeInteger(seed)) throw new RangeError(`demo seed must be a safe integer, got ${seed}`);
  const rows = options?.rows ?? defaultDemoRows;
  if (!Number.isInteger(rows) || rows < 1 || rows > maxDemoRows) {
    throw new RangeError(`demo rows must be an integer from 1 to ${maxDemoRows}, got ${rows}`);
  }
  const nowText = options?.now ?? defaultDemoNow;
  const now = Date.parse(nowText);
  if (Number.isNaN(now)) throw new RangeError(`demo now must be an ISO instant, got ${nowText}`);
  return new Context(seed, rows, now);
}

function* generate(ctx: Context, setName: DemoSetName): Generator<Row, void, undefined> {
  const counts = ctx.counts;
  const chart = accountChart(counts.accounts);
  switch (setName) {
    case 'Accounts':
      for (let i = 0; i < counts.accounts; i++) yield accountRow(ctx, chart, i);
      return;
    case 'Parts':
      for (let i = 0; i < counts.parts; i++) yield partRow(ctx, i);
      return;
    case 'PurchaseRequests':
      for (let i = 0; i < counts.purchaseRequests; i++) yield purchaseRequest(ctx, chart, i).row;
      return;
    case 'PRLineItems':
      for (let i = 0; i < counts.purchaseRequests; i++) yield* purchaseRequest(ctx, chart, i).lines;
      return;
    case 'PurchaseOrders':
      for (let i = 0; i < counts.purchaseOrders; i++) yield purchaseOrder(ctx, chart, i).row;
      return;
    case 'POLineItems':
      for (let i = 0; i < counts.purchaseOrders; i++) yield* purchaseOrder(ctx, chart, i).lines;
      return;
    case 'POAttachments':
      for (let i = 0; i < counts.purchaseOrders; i++) yield* purchaseOrder(ctx, chart, i).attachments;
      return;
    case 'BlanketPOs':
      for (let i = 0; i < counts.blanketPOs; i++) yield blanketPO(ctx, chart, i).row;
      return;
    case 'BlanketPOLineItems':
      for (let i = 0; i < counts.blanketPOs; i++) yield* blanketPO(ctx, chart, i).lines;
      return;
    case 'WorkOrders':
      for (let i = 0; i < counts.workOrders; i++) yield workOrder(ctx, chart, i).row;
      return;
    case 'Comments':
      for (let i = 0; i < counts.workOrders; i++) yield* workOrder(ctx, chart, i).comments;
      return;
    case 'ActualLabor':
      for (let i = 0; i < counts.workOrders; i++) yield* workOrder(ctx, chart, i).labor;
      return;
    case 'MeterReadings':
      for (let i = 0; i < counts.meters; i++) yield meter(ctx, i).row;
      return;
    case 'MeterHistory':
      for (let i = 0; i < counts.meters; i++) yield* meter(ctx, i).history;
      return;
    default:
      throw new RangeError(`unknown demo set ${String(setName satisfies never)}`);
  }
}

const demoSetNames: ReadonlySet<string> = new Set([...entitySetNames, 'Comments', 'ActualLabor', 'MeterHistory']);

/** The same rows one set at a time, as an iterator, for large seeds (rows of a set are generated lazily in key order). */
export function demoRows(setName: DemoSetName, options?: DemoOptions): Iterable<Row> {
  if (!demoSetNames.has(setName)) throw new RangeError(`unknown demo set ${String(setName)}`);
  const ctx = contextOf(options);
  // Each iteration starts over: the iterable can be walked more than once, with the same rows.
  return { [Symbol.iterator]: () => generate(ctx, setName) };
}

/** Every set and contained collection at once; each header record is generated once for all its rows. */
export function demoData(options?: DemoOptions): DemoData {
  const ctx = contextOf(options);
  const counts = ctx.counts;
  const chart = accountChart(counts.accounts);
  const sets = Object.fromEntries(entitySetNames.map((name) => [name, [] as Row[]])) as Record<EntitySetName, Row[]>;
  const comments: Row[] = [];
  const labor: Row[] = [];
  const meterHistory: Row[] = [];
  for (let i = 0; i < counts.accounts; i++) sets.Accounts.push(accountRow(ctx, chart, i));
  for (let i = 0; i < counts.parts; i++) sets.Parts.push(partRow(ctx, i));
  for (let i = 0; i < counts.purchaseRequests; i++) {
    const pr = purchaseRequest(ctx, chart, i);
    sets.PurchaseRequests.push(pr.row);
    sets.PRLineItems.push(...pr.lines);
  }
  for (let i = 0; i < counts.purchaseOrders; i++) {
    const po = purchaseOrder(ctx, chart, i);
    sets.PurchaseOrders.push(po.row);
    sets.POLineItems.push(...po.lines);
    sets.POAttachments.push(...po.attachments);
  }
  for (let i = 0; i < counts.blanketPOs; i++) {
    const bpo = blanketPO(ctx, chart, i);
    sets.BlanketPOs.push(bpo.row);
    sets.BlanketPOLineItems.push(...bpo.lines);
  }
  for (let i = 0; i < counts.workOrders; i++) {
    const wo = workOrder(ctx, chart, i);
    sets.WorkOrders.push(wo.row);
    comments.push(...wo.comments);
    labor.push(...wo.labor);
  }
  for (let i = 0; i < counts.meters; i++) {
    const m = meter(ctx, i);
    sets.MeterReadings.push(m.row);
    meterHistory.push(...m.history);
  }
  return { sets, comments, labor, meterHistory };
}
