// A hand-written oracle for the memory backend: every row of SEMANTICS.md's $filter table and every one of its
// "Decisions where the specification leaves room", as `$filter` → the exact ids that match over one fixed data set.
// The expected ids were worked out by hand from SEMANTICS.md, not by running the implementation.
import { describe, expect, it } from 'vitest';
import { runQuery, type Row } from '../../../src/backends/memory/index.js';
import { defineEntityType, isODataError, parseQuery, validateQuery, type EntityType } from '../../../src/index.js';

// ── model ───────────────────────────────────────────────────────────────────

const SampleLine: EntityType = defineEntityType({
  name: 'SampleLine',
  key: ['SampleId', 'LineNo'],
  properties: {
    SampleId: { type: 'Edm.Int32' },
    LineNo: { type: 'Edm.Int32' },
    Qty: { type: 'Edm.Int32', nullable: true },
    Part: { type: 'Edm.String', nullable: true },
  },
});

const Sample: EntityType = defineEntityType({
  name: 'Sample',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    Name: { type: 'Edm.String', nullable: true },
    Note: { type: 'Edm.String', nullable: true },
    Flag: { type: 'Edm.Boolean', nullable: true },
    Qty: { type: 'Edm.Int32', nullable: true },
    Big: { type: 'Edm.Int64', nullable: true },
    Price: { type: 'Edm.Decimal', nullable: true },
    Ratio: { type: 'Edm.Double', nullable: true },
    Due: { type: 'Edm.Date', nullable: true },
    At: { type: 'Edm.DateTimeOffset', nullable: true },
    Clock: { type: 'Edm.TimeOfDay', nullable: true },
    Span: { type: 'Edm.Duration', nullable: true },
    Tag: { type: 'Edm.Guid', nullable: true },
  },
  navigation: { Lines: { target: () => SampleLine, foreignKey: { Id: 'SampleId' } } },
});

// ── data ────────────────────────────────────────────────────────────────────
//
// Summary, for reading the expectations below (null = JSON null; "missing" = no Lines property at all):
//
// Id Name        Note              Flag  Qty          Big          Price  Ratio  Due        At (UTC)                 Clock         Span      Lines (Qty,Part)
//  1 'Alpha'     '50% off_sale'    true  5            2^53+1       0.1    0.5    2024-02-29 2024-05-01T08:30Z        08:30:00      PT1H      (2,x) (10,y)
//  2 'beta'      "O'Neil"          false 2147483647   2^53         '0.20' 1e308  2024-03-01 2024-05-01T08:30Z        23:59:59.999  P1DT2H    []
//  3 null        null              null  null         null         null   null   null       null                     null          null      missing
//  4 ''          'C:\dir'          null  -7           2^63-1       1.5    -2.5   2023-12-31 2024-01-01T00:30Z        00:00:00      PT30M     (null,z)
//  5 'Ünïcödé'   NBSP padded NBSP  true  0            42 (number)  '1.50' 0.1    2024-01-31 2024-02-29T12:00:00.123Z 12:00:00.500  PT1H30M   (7,x)
//  6 'ß'         FEFF bom FEFF     null  10           '123'        -2.5   null   null       null                     null          null      missing
//  7 '🚀x'       NEL nel NEL       false null         -(2^53+1)    '2.5'  2.5    2024-12-31 2024-12-31T23:59:59.999Z null          PT0S      (1,a%b)
//  8 U+E000      EMSP IDSP x TAB   true  -2147483648  null         null   null   2024-05-01 2024-05-01T00:00Z        null          null      []
//  9 'ALPHA'     null              null  10           0            null   null   2024-05-01 2024-05-01T00:00Z        null          null      (3,q) (4,r)
// 10 'İ'         '%'               false null         null         null   null   null       null                     null          null      missing
//
// Tag: 1 = 01234567-89AB-CDEF-0123-456789ABCDEF (upper case), 5 = the same GUID in lower case,
// 2 = fedcba98-7654-3210-fedc-ba9876543210, all others null.

const rows: Row[] = [
  {
    Id: 1,
    Name: 'Alpha',
    Note: '50% off_sale',
    Flag: true,
    Qty: 5,
    Big: 9007199254740993n, // 2^53 + 1: not representable as a double
    Price: 0.1, // a number read by its shortest decimal text: exactly 0.1
    Ratio: 0.5,
    Due: '2024-02-29', // leap day
    At: '2024-05-01T10:30:00+02:00', // the same instant as row 2
    Clock: '08:30:00',
    Span: 'PT1H',
    Tag: '01234567-89AB-CDEF-0123-456789ABCDEF',
    Lines: [
      { SampleId: 1, LineNo: 1, Qty: 2, Part: 'x' },
      { SampleId: 1, LineNo: 2, Qty: 10, Part: 'y' },
    ],
  },
  {
    Id: 2,
    Name: 'beta',
    Note: "O'Neil",
    Flag: false,
    Qty: 2147483647, // Int32 max
    Big: 9007199254740992n, // 2^53
    Price: '0.20',
    Ratio: 1e308,
    Due: '2024-03-01',
    At: '2024-05-01T08:30:00Z',
    Clock: '23:59:59.999',
    Span: 'P1DT2H',
    Tag: 'fedcba98-7654-3210-fedc-ba9876543210',
    Lines: [], // empty collection
  },
  {
    Id: 3,
    Name: null,
    Note: null,
    Flag: null,
    Qty: null,
    Big: null,
    Price: null,
    Ratio: null,
    Due: null,
    At: null,
    Clock: null,
    Span: null,
    Tag: null,
    // Lines missing
  },
  {
    Id: 4,
    Name: '',
    Note: 'C:\\dir', // one backslash
    Flag: null,
    Qty: -7,
    Big: 9223372036854775807n, // Int64 max
    Price: 1.5,
    Ratio: -2.5,
    Due: '2023-12-31',
    At: '2023-12-31T23:30:00-01:00', // 2024-01-01T00:30:00Z: year 2024 in UTC
    Clock: '00:00:00',
    Span: 'PT30M',
    Tag: null,
    Lines: [{ SampleId: 4, LineNo: 1, Qty: null, Part: 'z' }],
  },
  {
    Id: 5,
    Name: '\u00DCn\u00EFc\u00F6d\u00E9', // 'Ünïcödé', precomposed: 7 code points
    Note: '\u00A0padded\u00A0', // NBSP on both sides
    Flag: true,
    Qty: 0,
    Big: 42, // Int64 given as a number
    Price: '1.50',
    Ratio: 0.1,
    Due: '2024-01-31',
    At: new Date('2024-02-29T12:00:00.123Z'), // a Date object
    Clock: '12:00:00.500',
    Span: 5_400_000, // milliseconds: PT1H30M
    Tag: '01234567-89ab-cdef-0123-456789abcdef', // row 1's GUID in lower case
    Lines: [{ SampleId: 5, LineNo: 1, Qty: 7, Part: 'x' }],
  },
  {
    Id: 6,
    Name: '\u00DF', // 'ß'
    Note: '\uFEFFbom\uFEFF', // U+FEFF is not White_Space
    Flag: null,
    Qty: 10,
    Big: '123', // Int64 given as a digit string
    Price: -2.5,
    Ratio: null,
    Due: null,
    At: null,
    Clock: null,
    Span: null,
    Tag: null,
    // Lines missing
  },
  {
    Id: 7,
    Name: '\u{1F680}x', // '🚀x': 2 code points, 3 UTF-16 units
    Note: '\u0085nel\u0085', // U+0085 (NEL) is White_Space (JavaScript's trim keeps it)
    Flag: false,
    Qty: null,
    Big: -9007199254740993n,
    Price: '2.5',
    Ratio: 2.5,
    Due: '2024-12-31',
    At: '2024-12-31T23:59:59.9999Z', // truncated to .999 milliseconds
    Clock: null,
    Span: 'PT0S',
    Tag: null,
    Lines: [{ SampleId: 7, LineNo: 1, Qty: 1, Part: 'a%b' }],
  },
  {
    Id: 8,
    Name: '\uE000', // private use: above every BMP letter, below every astral code point
    Note: '\u2003\u3000x\t', // EM SPACE, IDEOGRAPHIC SPACE, x, TAB
    Flag: true,
    Qty: -2147483648, // Int32 min
    Big: null,
    Price: null,
    Ratio: null,
    Due: '2024-05-01',
    At: '2024-05-01T00:00:00Z', // equal to Due promoted to midnight UTC
    Clock: null,
    Span: null,
    Tag: null,
    Lines: [],
  },
  {
    Id: 9,
    Name: 'ALPHA',
    Note: null,
    Flag: null,
    Qty: 10,
    Big: 0n,
    Price: null,
    Ratio: null,
    Due: '2024-05-01',
    At: '2024-04-30T22:00:00-02:00', // 2024-05-01T00:00:00Z
    Clock: null,
    Span: null,
    Tag: null,
    Lines: [
      { SampleId: 9, LineNo: 1, Qty: 3, Part: 'q' },
      { SampleId: 9, LineNo: 2, Qty: 4, Part: 'r' },
    ],
  },
  {
    Id: 10,
    Name: '\u0130', // 'İ': simple lower case mapping is 'i' (JavaScript's full mapping gives 'i̇')
    Note: '%',
    Flag: false,
    Qty: null,
    Big: null,
    Price: null,
    Ratio: null,
    Due: null,
    At: null,
    Clock: null,
    Span: null,
    Tag: null,
    // Lines missing
  },
];

const all = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const none: number[] = [];

function idsOf(query: string): unknown[] {
  const bound = validateQuery(parseQuery(query), Sample);
  return runQuery(rows, bound).rows.map((r) => r['Id']);
}

function filterIds(filter: string): unknown[] {
  return idsOf(`$filter=${encodeURIComponent(filter)}`);
}

// ── $filter ─────────────────────────────────────────────────────────────────

type Case = readonly [filter: string, expected: readonly number[]];

const cases: Case[] = [
  // ── eq / ne: null eq null is true, null equals nothing else, ne is not eq ──
  ['Name eq null', [3]],
  ['Name ne null', [1, 2, 4, 5, 6, 7, 8, 9, 10]],
  // ne is the negation of eq: the null Name of row 3 is "not 'Alpha'"
  ["Name ne 'Alpha'", [2, 3, 4, 5, 6, 7, 8, 9, 10]],
  // rows 3, 7, 10 have a null Qty: null ne 10 is true
  ['Qty ne 10', [1, 2, 3, 4, 5, 7, 8, 10]],
  // two properties both null are equal (row 3)
  ['Name eq Note', [3]],
  // row 9: Note null, Name 'ALPHA' → ne is true; row 3: both null → ne is false
  ['Note ne Name', [1, 2, 4, 5, 6, 7, 8, 9, 10]],
  ['null eq null', all],
  ['Flag eq null', [3, 4, 6, 9]],
  ['Qty eq 2147483647', [2]],

  // ── gt ge lt le: false when either side is null ──
  ['Qty gt 5', [2, 6, 9]],
  // null gt 5 is false, so not (...) is true for the null Qty rows 3, 7, 10
  ['not (Qty gt 5)', [1, 3, 4, 5, 7, 8, 10]],
  ['Qty le 5', [1, 4, 5, 8]],
  ['Qty lt null', none],
  // unlike eq, null ge null is false
  ['Qty ge Qty', [1, 2, 4, 5, 6, 8, 9]],
  // both comparisons are false exactly for the null Qty rows
  ['not (Qty le 5) and not (Qty gt 5)', [3, 7, 10]],
  // Booleans order false < true
  ['Flag lt true', [2, 7, 10]],

  // ── and / or / not: three-valued, with the nullable Flag (null in rows 3, 4, 6, 9) ──
  ['Flag', [1, 5, 8]],
  // not null is null: null Flags are dropped
  ['not Flag', [2, 7, 10]],
  // null or true = true
  ['Flag or true', all],
  // null and false = false, so not (...) = true for null Flags too
  ['not (Flag and false)', all],
  // null or false = null, not null = null: only the false Flags
  ['not (Flag or false)', [2, 7, 10]],
  // rows 6 and 9: null or true = true; rows 3 and 4: null or false = null
  ['Flag or Qty gt 5', [1, 2, 5, 6, 8, 9]],
  // rows 3 and 4: null and false = false → true; rows 6 and 9: null and true = null → dropped
  ['not (Flag and Qty gt 5)', [1, 2, 3, 4, 5, 7, 8, 10]],
  // a comparison never yields null: null eq true is false, so ne is true for null Flags
  ['Flag ne true', [2, 3, 4, 6, 7, 9, 10]],
  // not binds tighter than eq: (not Flag) eq false; for a null Flag, null eq false is false
  ['not Flag eq false', [1, 5, 8]],
  ['not (Flag eq false)', [1, 3, 4, 5, 6, 8, 9]],
  // a bare null stands for a Boolean and evaluates as null: dropped
  ['null', none],
  ['not null', none],
  ['null or true', all],
  // null and false = false
  ['not (null and false)', all],
  // (Flag and true) is null exactly for null Flags, and null eq null is true
  ['(Flag and true) eq null', [3, 4, 6, 9]],
  // false or null = null and null or null = null; true or null = true
  ['(Flag or null) eq null', [2, 3, 4, 6, 7, 9, 10]],

  // ── in: an eq chain; null may be in the list; any comparable expressions ──
  ["Name in ('Alpha', 'beta')", [1, 2]],
  ["Name in ('Alpha', null)", [1, 3]],
  ['Qty in (5, 10, null)', [1, 3, 6, 7, 9, 10]],
  // Qty eq Qty is true for every row, null ones included (null eq null)
  ['Qty in (Qty, 1)', all],
  ["not (Name in ('Alpha'))", [2, 3, 4, 5, 6, 7, 8, 9, 10]],
  // exact decimals: 1.5 (number) and '1.50' (text) both equal 1.5
  ['Price in (0.3, 1.5)', [4, 5]],
  // rows 1 and 2 hold the same instant written with different offsets
  ['At in (2024-05-01T10:30:00+02:00, 1999-01-01T00:00:00Z)', [1, 2]],
  // a Date compared with a DateTimeOffset is midnight UTC of that day
  ['Due in (2024-05-01T00:00:00Z)', [8, 9]],
  // Int64 as a number (row 5) and as a digit string (row 6)
  ['Big in (42, 123)', [5, 6]],

  // ── arithmetic: null in, null out; exact integers; division by zero is null ──
  ['Qty add 1 eq null', [3, 7, 10]],
  // Int32 arithmetic is exact: Int32 max + 1 does not wrap around
  ['Qty add 1 eq 2147483648', [2]],
  ['-Qty eq 2147483648', [8]],
  ['Qty sub 1 eq -2147483649', [8]],
  // Int64 max + 1 is outside Int64: null (row 4), besides the null Bigs 3, 8, 10
  ['Big add 1 eq null', [3, 4, 8, 10]],
  // row 4: Int64 max * 2 overflows → null → gt is false; row 1: 2^54 + 2 fits
  ['Big mul 2 gt 0', [1, 2, 5, 6]],
  // Int64 beyond 2^53: 2^53 + 1 (row 1) is not 2^53 (row 2), as doubles would make it
  ['Big eq 9007199254740993', [1]],
  ['Big gt 9007199254740992', [1, 4]],
  ['Big sub 1 eq 9007199254740992', [1]],
  // 9223372036854775808 does not fit Int64: a Decimal literal; Int64 max (row 4) is exactly 1 below it
  ['Big lt 9223372036854775808', [1, 2, 4, 5, 6, 7, 9]],
  // integer div truncates toward zero: -7 div 2 = -3
  ['Qty div 2 eq -3', [4]],
  // mod has the sign of the dividend: -7 mod 3 = -1; Int32 min mod 3 = -2
  ['Qty mod 3 eq -1', [4]],
  ['Qty mod 3 eq 1', [2, 6, 9]],
  // divby is decimal division, even for integers
  ['Qty divby 2 eq -3.5', [4]],
  ['Qty divby 2 eq 2.5', [1]],
  // division or modulo by zero is null, for every numeric type (Double included, not INF)
  ['Qty div 0 eq null', all],
  ['Qty mod 0 eq null', all],
  ['Ratio div 0 eq null', all],
  ['Price div 0 eq null', all],
  // div with a Decimal operand is decimal division, not truncation
  ['Price div 2 eq 0.75', [4, 5]],
  // non-terminating decimal division keeps 20 digits after the point, rounded half away from zero
  ['Price div 3 eq 0.03333333333333333333', [1]],
  ['Price div 3 eq 0.06666666666666666667', [2]],
  ['Price sub 0.1 eq 0.1', [2]],
  ['-Price eq 2.5', [6]],
  // Decimal mod also has the sign of the dividend: -2.5 mod 1 = -0.5
  ['Price mod 1 eq -0.5', [6]],

  // ── numeric types, promotion, exact decimals ──
  // exact: 0.1 + 0.2 is 0.3 for Decimal (row 1 Price 0.1)
  ['Price add 0.2 eq 0.3', [1]],
  // Decimal literals: true on every row
  ['0.1 add 0.2 eq 0.3', all],
  // 1.5 eq 1.50
  ['Price eq 1.5', [4, 5]],
  ['Price eq 0.2', [2]],
  // Ratio is a Double: the Decimal literals are compared as Double, and 0.1 + 0.2 ≠ 0.3 in binary floating point
  ['Ratio add 0.2 eq 0.3', none],
  ['Ratio eq 0.1', [5]],
  ['Ratio eq 1e308', [2]],
  ['Ratio lt INF', [1, 2, 4, 5, 7]],
  // Decimal vs Double compared as Double
  ['Price lt Ratio', [1, 2]],
  ['Qty eq 5.0', [1]],
  ['Qty add 0.5 eq 5.5', [1]],

  // ── strings: case-sensitive, ordinal by code point ──
  ["Name eq 'alpha'", none],
  // 'ALPHA' < 'Alpha' < 'B' < 'beta'; '' is smallest
  ["Name lt 'B'", [1, 4, 9]],
  // ordinal by code point: '🚀x' (U+1F680) > U+E000, though its first UTF-16 unit (U+D83D) is smaller
  ["Name gt '\uE000'", [7]],
  // U+E000 < U+1F680 by code point; '🚀x' > '🚀'
  ["Name lt '\u{1F680}'", [1, 2, 4, 5, 6, 8, 9, 10]],
  ["Name ge 'a'", [2, 5, 6, 7, 8, 10]],
  ["Name eq ''", [4]],
  ["Note eq 'O''Neil'", [2]],

  // ── contains startswith endswith: % _ \ are literal ──
  ["contains(Note, '%')", [1, 10]],
  ["contains(Note, '_')", [1]],
  // as a LIKE pattern '%_' would match every non-empty Note
  ["contains(Note, '%_')", none],
  ["contains(Note, '\\')", [4]],
  ["contains(Note, '''')", [2]],
  ["startswith(Note, '50%')", [1]],
  ["endswith(Note, '_sale')", [1]],
  ["endswith(Note, '%')", [10]],
  ["startswith(Name, 'A')", [1, 9]],
  ["contains(Name, 'a')", [1, 2]],
  // every string starts with '': all but the null Name
  ["startswith(Name, '')", [1, 2, 4, 5, 6, 7, 8, 9, 10]],

  // ── length indexof substring: code points, 0-based ──
  // 'ß', U+E000 and 'İ' are one code point each
  ['length(Name) eq 1', [6, 8, 10]],
  // '🚀x' is 2 code points (3 UTF-16 units)
  ['length(Name) eq 2', [7]],
  ['length(Name) eq 7', [5]],
  ['length(Name) eq 0', [4]],
  // a canonical function given null returns null
  ['length(Name) eq null', [3]],
  ['startswith(Name, null) eq null', all],
  // 'x' follows one code point in '🚀x'
  ["indexof(Name, 'x') eq 1", [7]],
  ["indexof(Name, 'ph') eq 2", [1]],
  // -1 when absent; null for the null Name
  ["indexof(Name, 'z') eq -1", [1, 2, 4, 5, 6, 7, 8, 9, 10]],
  ["substring(Name, 1) eq 'x'", [7]],
  ["substring(Name, 0, 1) eq '\u{1F680}'", [7]],
  ["substring(Name, 1, 2) eq 'lp'", [1]],
  // a negative length (Qty -7 in row 4, Int32 min in row 8) gives null; so does a null Name or Qty
  ['substring(Name, 1, Qty) eq null', [3, 4, 7, 8, 10]],
  ['length(concat(Name, Name)) eq 4', [7]],

  // ── tolower toupper trim concat ──
  ["toupper(Name) eq 'ALPHA'", [1, 9]],
  ["tolower(Name) eq 'alpha'", [1, 9]],
  // simple case mapping: toupper('ß') is 'ß', not 'SS'
  ["toupper(Name) eq '\u00DF'", [6]],
  ["toupper(Name) eq 'SS'", none],
  ["toupper(Name) eq '\u00DCN\u00CFC\u00D6D\u00C9'", [5]],
  // simple case mapping: tolower('İ') is 'i' (one code point), not 'i̇'
  ["tolower(Name) eq 'i'", [10]],
  // simple case mapping: U+1FB3 'ᾳ' upper-cases to U+1FBC 'ᾼ' (UnicodeData.txt), not to the full mapping 'ΑΙ'
  ["toupper('\u1FB3') eq '\u1FBC'", all],
  // unchanged by toupper: '', 'ß', U+E000, 'ALPHA', 'İ'; and row 3: toupper(null) is null, null eq null
  ['toupper(Name) eq Name', [3, 4, 6, 8, 9, 10]],
  // NBSP is White_Space
  ["trim(Note) eq 'padded'", [5]],
  // U+FEFF is not White_Space (JavaScript's trim would remove it)
  ["trim(Note) eq 'bom'", none],
  // U+0085 is White_Space (JavaScript's trim would keep it)
  ["trim(Note) eq 'nel'", [7]],
  // EM SPACE, IDEOGRAPHIC SPACE, TAB
  ["trim(Note) eq 'x'", [8]],
  // rows 3 and 9: trim(null) is null, null eq null; row 6: FEFF stays
  ['trim(Note) eq Note', [1, 2, 3, 4, 6, 9, 10]],
  // concat with a null argument is null (row 9: Note null), unlike SQL CONCAT
  ['concat(Name, Note) eq null', [3, 9]],
  ["concat(Name, '!') eq 'Alpha!'", [1]],
  ["concat(concat(Name, ' '), Note) eq 'beta O''Neil'", [2]],

  // ── matchesPattern: a JavaScript regular expression with the u flag ──
  ["matchesPattern(Name, '^A')", [1, 9]],
  // with u, '.' matches the astral code point
  ["matchesPattern(Name, '^.x$')", [7]],
  ["matchesPattern(Name, '^\\p{Lu}')", [1, 5, 9, 10]],
  ["matchesPattern(Name, '^[a-z]+$')", [2]],
  // not null is null: row 3 dropped
  ["not matchesPattern(Name, 'a')", [4, 5, 6, 7, 8, 9, 10]],

  // ── round floor ceiling: half away from zero ──
  // round(-2.5) is -3 (Math.round gives -2)
  ['round(Price) eq -3', [6]],
  ['round(Price) eq 3', [7]],
  ['round(Price) eq 2', [4, 5]],
  // Double too: round(-2.5) is -3
  ['round(Ratio) eq -3', [4]],
  ['round(Ratio) eq 3', [7]],
  ['round(-2.5) eq -3', all],
  ['round(Ratio) eq null', [3, 6, 8, 9, 10]],
  ['round(Qty) eq 5', [1]],
  ['floor(Price) eq -3', [6]],
  ['ceiling(Price) eq -2', [6]],
  ['ceiling(Price) eq 1', [1, 2]],
  ['floor(Ratio) eq 0', [1, 5]],

  // ── date and time functions: DateTimeOffsets are instants, answered in UTC ──
  // row 4 is 2023-12-31T23:30-01:00 locally, 2024 in UTC
  ['year(At) eq 2024', [1, 2, 4, 5, 7, 8, 9]],
  ['year(At) eq 2023', none],
  // row 1 is 10:30+02:00 locally, 08:30 in UTC
  ['hour(At) eq 8', [1, 2]],
  ['month(At) eq 1 and day(At) eq 1', [4]],
  ['minute(At) eq 30', [1, 2, 4]],
  ['second(At) eq 59', [7]],
  ['fractionalseconds(At) eq 0.123', [5]],
  // stored '.9999' is truncated to milliseconds
  ['fractionalseconds(At) eq 0.999', [7]],
  ['date(At) eq 2024-05-01', [1, 2, 8, 9]],
  ['date(At) eq 2024-01-01', [4]],
  ['time(At) eq 08:30:00', [1, 2]],
  // stored values are kept in UTC: offset 0, whatever offset they were written with
  ['totaloffsetminutes(At) eq 0', [1, 2, 4, 5, 7, 8, 9]],
  // of a literal: its own offset
  ['totaloffsetminutes(2024-05-01T10:30:00+02:00) eq 120', all],
  // date functions on a literal with an offset answer in UTC
  ['hour(2024-05-01T10:30:00+02:00) eq 8', all],
  ['At lt now()', [1, 2, 4, 5, 7, 8, 9]],
  ['At gt mindatetime() and At lt maxdatetime()', [1, 2, 4, 5, 7, 8, 9]],
  ['year(Due) eq 2024 and month(Due) eq 2 and day(Due) eq 29', [1]],
  ['Due gt 2024-02-28', [1, 2, 7, 8, 9]],
  ['Due lt 2024-01-01', [4]],
  ['hour(Clock) eq 23', [2]],
  ['minute(Clock) eq 30', [1]],
  // 12:00:00.500 is after 12:00:00
  ['Clock gt 12:00:00', [2, 5]],
  ['Clock eq 00:00:00', [4]],
  ['fractionalseconds(Clock) eq 0.5', [5]],

  // ── instants, and Date promoted to midnight UTC ──
  // rows 1 (+02:00) and 2 (Z) are the same instant
  ['At eq 2024-05-01T08:30:00Z', [1, 2]],
  ['At eq 2024-05-01T10:30:00+02:00', [1, 2]],
  // literals are truncated to milliseconds: .0009 is .000
  ['At eq 2024-05-01T08:30:00.0009Z', [1, 2]],
  // stored .9999 truncated to .999
  ['At eq 2024-12-31T23:59:59.999Z', [7]],
  // Due 2024-05-01 is 2024-05-01T00:00:00Z
  ['Due eq 2024-05-01T00:00:00Z', [8, 9]],
  ['Due eq 2024-05-01T02:00:00+02:00', [8, 9]],
  // row 9's At is 2024-04-30T22:00-02:00 = midnight UTC of its Due; rows 3, 6, 10: null eq null is true
  ['Due eq At', [3, 6, 8, 9, 10]],
  ['Due lt At', [1, 2, 4, 5, 7]],
  ['At gt 2024-05-01', [1, 2, 7]],
  // cast Date → DateTimeOffset is midnight UTC
  ['cast(Due, Edm.DateTimeOffset) eq 2024-05-01T00:00:00Z', [8, 9]],

  // ── durations ──
  ["Span eq duration'PT1H'", [1]],
  // row 5 is given in milliseconds (PT1H30M)
  ["Span gt duration'PT1H'", [2, 5]],
  ["Span eq duration'PT1H30M'", [5]],
  // the bare 4.01 form
  ["Span eq 'PT30M'", [4]],
  ["Span eq duration'PT0S'", [7]],
  ["Span add Span eq duration'PT2H'", [1]],
  ["At add duration'PT1H' eq 2024-05-01T09:30:00Z", [1, 2]],
  ["At sub 2024-05-01T00:00:00Z eq duration'PT8H30M'", [1, 2]],

  // ── GUIDs compare case-insensitively ──
  ['Tag eq 01234567-89ab-cdef-0123-456789abcdef', [1, 5]],
  ['Tag eq 01234567-89AB-CDEF-0123-456789ABCDEF', [1, 5]],
  ['Tag ne 01234567-89ab-cdef-0123-456789abcdef', [2, 3, 4, 6, 7, 8, 9, 10]],

  // ── cast and isof ──
  // Decimal → String is the shortest exact form: 1.5 and '1.50' both give '1.5'
  ["cast(Price, Edm.String) eq '1.5'", [4, 5]],
  ["cast(Price, Edm.String) eq '0.2'", [2]],
  // Decimal → integer rounds half away from zero: -2.5 → -3, 2.5 → 3, 1.5 → 2
  ['cast(Price, Edm.Int32) eq -3', [6]],
  ['cast(Price, Edm.Int32) eq 3', [7]],
  ['cast(Price, Edm.Int32) eq 2', [4, 5]],
  // Double → Int32: 0.5 rounds to 1
  ['cast(Ratio, Edm.Int32) eq 1', [1]],
  // out of range (1e308, row 2) is null, as are the null Ratios
  ['cast(Ratio, Edm.Int32) eq null', [2, 3, 6, 8, 9, 10]],
  // Int64 beyond Int32 (rows 1, 2, 4, 7) is null
  ['cast(Big, Edm.Int32) eq null', [1, 2, 3, 4, 7, 8, 10]],
  // no float rounding of 2^53 + 1
  ["cast(Big, Edm.String) eq '9007199254740993'", [1]],
  ["cast(Qty, Edm.String) eq '-7'", [4]],
  // String → number accepts only the literal's own syntax
  ["cast('12', Edm.Int32) eq 12", all],
  ["cast('1e3', Edm.Double) eq 1000", all],
  // a leading space is not literal syntax (JavaScript's Number would accept it)
  ["cast(' 12', Edm.Int32) eq null", all],
  // hexadecimal is not literal syntax (Number('0x10') is 16)
  ["cast('0x10', Edm.Int32) eq null", all],
  // the empty string is not a number (Number('') is 0)
  ["cast('', Edm.Int32) eq null", all],
  // isof is false for null
  ['isof(Name, Edm.String)', [1, 2, 4, 5, 6, 7, 8, 9, 10]],
  // the bound type must be exactly the type: Int32 is not Int64
  ['isof(Qty, Edm.Int64)', none],
  ['isof(Price, Edm.Decimal)', [1, 2, 4, 5, 6, 7]],

  // ── lambdas over Lines: non-empty in 1, 4, 5, 7, 9; empty in 2, 8; missing in 3, 6, 10 ──
  // any over an empty or missing collection is false
  ['Lines/any()', [1, 4, 5, 7, 9]],
  ['not Lines/any()', [2, 3, 6, 8, 10]],
  ['Lines/any(l: l/Qty gt 5)', [1, 5]],
  // all over an empty or missing collection is true; row 4's null line Qty makes gt false
  ['Lines/all(l: l/Qty gt 5)', [2, 3, 5, 6, 8, 10]],
  ['Lines/all(l: l/Qty ne null)', [1, 2, 3, 5, 6, 7, 8, 9, 10]],
  ['Lines/any(l: l/Qty eq null)', [4]],
  // row 4: not (null gt 5) is true
  ['Lines/all(l: not (l/Qty gt 5))', [2, 3, 4, 6, 7, 8, 9, 10]],
  ["Lines/any(l: l/Part eq 'x' and l/Qty gt 1)", [1, 5]],
  ["Lines/all(l: l/Part eq 'x')", [2, 3, 5, 6, 8, 10]],
  // the parent's Qty inside the lambda: row 1 (2 < 5), row 9 (3 < 10); row 7's parent Qty is null
  ['Lines/any(l: l/Qty lt Qty)', [1, 9]],
  // '%' is literal inside lambdas too
  ["Lines/any(l: contains(l/Part, '%'))", [7]],
  ['Lines/$count eq 2', [1, 9]],
];

describe('memory backend: $filter semantics table (SEMANTICS.md)', () => {
  it('has at least 90 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(90);
  });

  it.each(cases)('%s', (filter, expected) => {
    expect(filterIds(filter)).toEqual(expected);
  });
});

// ── $orderby, $top, $skip ───────────────────────────────────────────────────

/** A query string written unencoded (no value holds '&'); each value is percent-encoded before parsing. */
function encodeQuery(query: string): string {
  return query
    .split('&')
    .map((part) => {
      const at = part.indexOf('=');
      return `${part.slice(0, at)}=${encodeURIComponent(part.slice(at + 1))}`;
    })
    .join('&');
}

const orderCases: Case[] = [
  // nulls first ascending; the tie 6/9 (Qty 10) broken by the key
  ['$orderby=Qty', [3, 7, 10, 8, 4, 5, 1, 6, 9, 2]],
  // nulls last descending; ties still broken by the key ascending
  ['$orderby=Qty desc', [2, 6, 9, 1, 5, 4, 8, 3, 7, 10]],
  // ordinal by code point: '' < 'ALPHA' < 'Alpha' < 'beta' < Ü (DC) < ß (DF) < İ (130) < U+E000 < 🚀 (1F680)
  ['$orderby=Name', [3, 4, 9, 1, 2, 5, 6, 10, 8, 7]],
  ['$orderby=Name desc', [7, 8, 10, 6, 5, 2, 1, 9, 4, 3]],
  // false < true, nulls first
  ['$orderby=Flag', [3, 4, 6, 9, 2, 7, 10, 1, 5, 8]],
  ['$orderby=Flag desc', [1, 5, 8, 2, 7, 10, 3, 4, 6, 9]],
  // instants: rows 8/9 and 1/2 are equal instants with different offsets, so the key decides
  ['$orderby=At', [3, 6, 10, 4, 5, 8, 9, 1, 2, 7]],
  ['$orderby=At desc,Id desc', [7, 2, 1, 9, 8, 5, 4, 10, 6, 3]],
  // 1.5 and '1.50' tie (key order), nulls last
  ['$orderby=Price desc&$top=3', [7, 4, 5]],
  ['$orderby=Price', [3, 8, 9, 10, 6, 1, 2, 4, 5, 7]],
  // Int64 beyond 2^53 orders exactly: 2^53 (row 2) < 2^53 + 1 (row 1) < Int64 max (row 4)
  ['$orderby=Big', [3, 8, 10, 7, 9, 5, 6, 2, 1, 4]],
  ['$orderby=Clock desc', [2, 5, 1, 4, 3, 6, 7, 8, 9, 10]],
  // row 5's duration is in milliseconds (PT1H30M)
  ['$orderby=Span', [3, 6, 8, 9, 10, 7, 4, 1, 5, 2]],
  // the two spellings of one GUID tie (key order)
  ['$orderby=Tag', [3, 4, 6, 7, 8, 9, 10, 1, 5, 2]],
  // length in code points: '🚀x' is 2; null last descending
  ['$orderby=length(Name) desc', [5, 1, 9, 2, 7, 6, 8, 10, 4, 3]],
  ['$orderby=Due desc&$skip=1&$top=3', [8, 9, 2]],
  // without $orderby: key order
  ['$skip=2&$top=3', [3, 4, 5]],
  ['$filter=Qty ne null&$orderby=Qty&$skip=1&$top=2', [4, 5]],
  ['$top=0', none],
  ['$skip=8', [9, 10]],
];

describe('memory backend: $orderby, $top and $skip (SEMANTICS.md)', () => {
  it.each(orderCases)('%s', (query, expected) => {
    expect(idsOf(encodeQuery(query))).toEqual(expected);
  });
});

// ── rejected at validation ──────────────────────────────────────────────────

describe('validation rejects what SEMANTICS.md says has no meaning here', () => {
  function errorOf(filter: string): { status: number; message: string } {
    try {
      filterIds(filter);
    } catch (error) {
      if (isODataError(error)) return { status: error.status, message: error.message };
      throw error;
    }
    throw new Error(`${filter} was accepted`);
  }

  it("'has' is a 400 naming the operand type", () => {
    const { status, message } = errorOf("Name has 'x'");
    expect(status).toBe(400);
    expect(message).toContain('Edm.String');
  });

  it('a lambda over something that is not a collection is a 400 naming the path', () => {
    const { status, message } = errorOf('Name/any(x: true)');
    expect(status).toBe(400);
    expect(message).toContain('Name');
  });

  it('a negative substring literal is a 400', () => {
    expect(errorOf("substring(Name, -1) eq 'x'").status).toBe(400);
  });
});
