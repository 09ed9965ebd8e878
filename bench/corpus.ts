// A fixed corpus of realistic `$filter` values (already percent-decoded), grouped into classes.
//
// Only constructs that both peer parsers (odata-v4-parser, @odata/parser) are expected to accept
// are used here, so every parser parses exactly the same inputs. parse.bench.ts still verifies
// each item against every parser and drops (for all parsers, with a note) anything a peer rejects.

export interface CorpusClass {
  /** Class name as printed in the result tables. */
  readonly name: string;
  readonly items: readonly string[];
}

/** `Status eq 'S0' or Status eq 'S1' or …` with `terms` comparisons (used for the linearity table). */
export function orChain(terms: number): string {
  if (!Number.isInteger(terms) || terms < 1) throw new RangeError(`orChain needs a positive integer, got ${terms}`);
  const parts = new Array<string>(terms);
  for (let i = 0; i < terms; i++) parts[i] = `Status eq 'S${i}'`;
  return parts.join(' or ');
}

export const shortEquality: CorpusClass = {
  name: 'short equality',
  items: [
    "Account eq '5100-200'",
    'IsActive eq true',
    "Status ne 'Closed'",
    'CustomerID eq 10042',
    "Vendor/Name eq 'O''Brien Supply'",
  ],
};

export const dateRange: CorpusClass = {
  name: 'date range',
  items: [
    // DateTimeOffset literals
    'RequestedDate ge 2024-01-01T00:00:00Z and RequestedDate lt 2024-02-01T00:00:00Z',
    'ModifiedAt gt 2024-06-30T23:59:59.999+02:00',
    "CreatedAt ge 2023-12-31T22:00:00-05:00 and CreatedAt lt 2024-01-01T00:00:00Z and Status eq 'Open'",
    // Date literals
    'ShipDate ge 2024-01-01 and ShipDate le 2024-03-31',
    '(DueDate ge 2024-03-01 and DueDate lt 2024-04-01) or PostingDate eq 2024-03-15',
  ],
};

export const functions: CorpusClass = {
  name: 'functions',
  items: [
    "contains(tolower(Description),'pump')",
    "startswith(PartID,'P-1') and year(CreatedDate) eq 2024",
    'round(UnitCost mul 1.08) gt 100',
    "endswith(Email,'@example.com') and length(Name) le 40",
    "not contains(Notes,'obsolete') and month(ShipDate) eq 12",
    "indexof(toupper(City),'BERLIN') ge 0",
    "substring(PostalCode,0,2) eq '10' and trim(Region) ne ''",
  ],
};

export const orChain50: CorpusClass = {
  name: '50-term or chain',
  items: [orChain(50)],
};

/** The classes in table order. */
export const corpus: readonly CorpusClass[] = [shortEquality, dateRange, functions, orChain50];
