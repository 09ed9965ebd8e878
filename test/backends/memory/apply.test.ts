// $apply in the memory backend: what each transformation gives for small rows, worked out by hand, with the null,
// empty-input, exact-decimal and equal-value rules of docs/query-language.md#apply.
import { describe, expect, it } from 'vitest';
import { defineEntityType } from '../../../src/model/schema.js';
import { parseQuery } from '../../../src/syntax/query-string.js';
import { validateQuery } from '../../../src/validate/bind.js';
import { runApply } from '../../../src/backends/memory/apply.js';
import { runQuery } from '../../../src/backends/memory/compile.js';
import { ODataError } from '../../../src/errors.js';
import { Thing } from '../sql/fixtures.js';

const Line = defineEntityType({
  name: 'Line',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    Vendor: { type: 'Edm.String' },
    Qty: { type: 'Edm.Int32' },
    Price: { type: 'Edm.Decimal', precision: 12, scale: 4 },
    Weight: { type: 'Edm.Double' },
  },
});
const rows = [
  { Id: 1, Vendor: 'A', Qty: 2, Price: '1.5000', Weight: 0.1 },
  { Id: 2, Vendor: 'B', Qty: 3, Price: '0.1', Weight: 0.2 },
  { Id: 3, Vendor: 'A', Qty: null, Price: '1.50', Weight: null },
  { Id: 4, Vendor: null, Qty: 7, Price: null, Weight: 1 },
  { Id: 5, Vendor: 'B', Qty: 2147483647, Price: '0.2', Weight: 2 },
];

const answer = (query: string): unknown[] => {
  const bound = validateQuery(parseQuery(query), Line);
  return runQuery(runApply(rows, bound.apply!), bound).value;
};

describe('$apply in memory', () => {
  it('groups nulls together and equal decimals together, and leaves nulls out of every aggregate', () => {
    expect(answer('$apply=groupby((Vendor),aggregate(Qty with sum as Q,Qty with average as A,$count as N))')).toEqual([
      { Vendor: null, Q: '7', A: '7', N: '1' },
      { Vendor: 'A', Q: '2', A: '2', N: '2' },
      { Vendor: 'B', Q: '2147483650', A: '1073741825', N: '2' },
    ]);
    expect(answer('$apply=groupby((Price))')).toEqual([
      { Price: null },
      { Price: '0.1' },
      { Price: '0.2' },
      { Price: '1.5' },
    ]);
    expect(answer('$apply=aggregate(Price with countdistinct as D,Vendor with countdistinct as V)')).toEqual([
      { D: '3', V: '2' },
    ]);
  });

  it('sums decimals exactly and rounds an average at 20 places; doubles stay doubles', () => {
    expect(answer('$apply=aggregate(Price with sum as S,Price with average as A,Weight with sum as W)')).toEqual([
      { S: '3.3', A: '0.825', W: 3.3 },
    ]);
    expect(answer("$apply=filter(Vendor eq 'B' or Id eq 3)/aggregate(Price with average as A)")).toEqual([
      { A: '0.6' },
    ]);
    expect(answer('$apply=filter(Id le 3)/aggregate(Price with average as A)')).toEqual([
      { A: '1.03333333333333333333' },
    ]);
  });

  it('aggregates no rows to one instance of nulls and zero counts; groups none to nothing', () => {
    expect(
      answer(
        '$apply=filter(Id gt 9)/aggregate(Qty with sum as S,Qty with min as M,$count as N,Qty with countdistinct as D)',
      ),
    ).toEqual([{ S: null, M: null, N: '0', D: '0' }]);
    expect(answer('$apply=filter(Id gt 9)/groupby((Vendor),aggregate($count as N))')).toEqual([]);
  });

  it('ranks with topcount, toppercent and bottomsum, keeping the order the rows came in', () => {
    expect(answer('$apply=topcount(2,Qty)&$select=Id')).toEqual([{ Id: 4 }, { Id: 5 }]);
    expect(answer('$apply=bottomcount(2,Weight)&$select=Id')).toEqual([{ Id: 1 }, { Id: 2 }]);
    // the total weight is 3.3: 50% of it is reached by 2 alone
    expect(answer('$apply=toppercent(50,Weight)&$select=Id')).toEqual([{ Id: 5 }]);
    expect(answer('$apply=bottomsum(0.25,Weight)&$select=Id')).toEqual([{ Id: 1 }, { Id: 2 }]);
  });

  it('orders, pages and concatenates inside the sequence, and the options after it read the aliases', () => {
    expect(answer('$apply=orderby(Qty desc)/skip(1)/top(2)&$select=Id&$orderby=Id desc')).toEqual([
      { Id: 4 },
      { Id: 2 },
    ]);
    expect(
      answer(
        '$apply=concat(groupby((Vendor),aggregate(Qty with sum as Q)),aggregate(Qty with sum as Q))&$filter=Q gt 5',
      ),
    ).toEqual([
      // the groups in ascending order of their values (null first) whatever order the rows came in, then the
      // total: concat keeps the order of its sequences
      { Vendor: null, Q: '7' },
      { Vendor: 'B', Q: '2147483650' },
      { Vendor: null, Q: '2147483659' },
    ]);
  });

  it('refuses what does not bind, naming $apply and the position', () => {
    expect(() => answer('$apply=aggregate(Vendor with average as X)')).toThrow(
      /average cannot aggregate an Edm.String value at position 22 of \$apply/,
    );
    expect(() => answer('$apply=groupby((Vendor),aggregate($count as N,Qty with sum as N))')).toThrow(
      /The alias N is given twice at position 55/,
    );
    expect(() => answer('$apply=compute(Qty add 1 as Qty)')).toThrow(
      /The alias Qty is already a property here at position 21/,
    );
    expect(() => answer('$apply=aggregate($count as N)&$filter=Qty gt 1')).toThrow(
      /Unknown property 'Qty' on the result of \$apply at position 0 of \$filter/,
    );
  });
});

/** A type with searchable properties (Title, Notes) beside others, for search(...) in $apply. */
const Order = defineEntityType({
  name: 'Order',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    Title: { type: 'Edm.String', searchable: true },
    Notes: { type: 'Edm.String', searchable: true },
    Status: { type: 'Edm.String' },
    Hours: { type: 'Edm.Int32' },
  },
});
const orders = [
  { Id: 1, Title: 'Replace pump seal', Notes: null, Status: 'Open', Hours: 2 },
  { Id: 2, Title: 'Inspect valve', Notes: 'PUMP-101 leaks', Status: 'Open', Hours: 3 },
  { Id: 3, Title: 'Pumps overhaul', Notes: 'heat exchanger', Status: 'Closed', Hours: 5 },
  { Id: 4, Title: 'Pump, centrifugal', Notes: 'seal kit', Status: 'Closed', Hours: 7 },
  { Id: 5, Title: null, Notes: null, Status: null, Hours: 1 },
];
const ordered = (query: string): unknown[] => {
  const bound = validateQuery(parseQuery(query), Order);
  return runQuery(runApply(orders, bound.apply!), bound).value;
};
const refusal = (
  query: string,
  type = Order,
): { code: string; target?: string; position?: number; message: string } => {
  try {
    validateQuery(parseQuery(query), type);
  } catch (error) {
    if (error instanceof Error && 'code' in error) return error as never;
    throw error;
  }
  throw new Error(`${query} was accepted`);
};

describe('search in $apply', () => {
  it('keeps the entities the search expression matches, as $search does, before or inside a grouping', () => {
    // pump: the word in Title or Notes (Pumps is another word)
    expect(ordered('$apply=search(pump)&$select=Id')).toEqual([{ Id: 1 }, { Id: 2 }, { Id: 4 }]);
    expect(ordered('$apply=search(pump)/groupby((Status),aggregate($count as N,Hours with sum as H))')).toEqual([
      { Status: 'Closed', N: '1', H: '7' },
      { Status: 'Open', N: '2', H: '5' },
    ]);
    expect(
      ordered('$apply=filter(Status eq \'Closed\')/search(seal OR "heat exchanger")/aggregate($count as N)'),
    ).toEqual([{ N: '2' }]);
    expect(ordered('$apply=search(NOT pump)/search(NOT seal)&$select=Id')).toEqual([{ Id: 3 }, { Id: 5 }]);
    // after a compute the entities are still entities; inside a groupby before its aggregate, and in concat
    expect(ordered('$apply=compute(Hours mul 2 as H2)/search(pump)/aggregate(H2 with sum as S)')).toEqual([
      { S: '24' },
    ]);
    // (the groups are made first: a group the search leaves nothing of aggregates none)
    expect(ordered('$apply=groupby((Status),search(seal)/aggregate($count as N))')).toEqual([
      { Status: null, N: '0' },
      { Status: 'Closed', N: '1' },
      { Status: 'Open', N: '1' },
    ]);
    expect(ordered('$apply=concat(search(valve),search(centrifugal))&$select=Id')).toEqual([{ Id: 2 }, { Id: 4 }]);
    // a search after other transformations runs over the rows they give, in their order: the two longest (the
    // entities then come in key order, as without $apply)
    expect(ordered('$apply=orderby(Hours desc)/search(pump)/top(2)&$select=Id')).toEqual([{ Id: 2 }, { Id: 4 }]);
  });

  it('refuses search where the instances are no longer entities, at its position in $apply', () => {
    const afterAggregate = refusal('$apply=aggregate($count as N)/search(pump)');
    expect(afterAggregate).toMatchObject({ code: 'InvalidSyntax', target: '$apply', position: 23 });
    expect(afterAggregate.message).toMatch(
      /^search applies to entities, and the instances here are made by an aggregate, groupby or concat before it at position 23 of \$apply; search first/,
    );
    expect(refusal('$apply=groupby((Status))/search(pump)')).toMatchObject({ code: 'InvalidSyntax', position: 18 });
    expect(refusal('$apply=groupby((Status),aggregate($count as N)/search(pump))')).toMatchObject({
      code: 'InvalidSyntax',
      position: 40,
    });
    expect(refusal('$apply=concat(search(a),search(b))/search(pump)')).toMatchObject({
      code: 'InvalidSyntax',
      position: 28,
    });
  });

  it('answers 501 for a type without searchable properties, and 400 for a term without a letter or digit', () => {
    const none = refusal('$apply=filter(Qty gt 1)/search(pump)', Line);
    expect(none).toMatchObject({ code: 'NotImplemented', target: '$apply', position: 17 });
    expect(none.message).toMatch(
      /The search transformation is not offered for Line: none of its properties is searchable/,
    );
    const empty = refusal('$apply=search(pump AND ,)');
    expect(empty).toMatchObject({ code: 'InvalidSyntax', target: '$apply', position: 16 });
    expect(empty.message).toMatch(/The search term "," has no letter or digit to search for at position 16 of \$apply/);
    // $search beside $apply stays a 501
    expect(refusal('$apply=search(pump)&$search=seal')).toMatchObject({ code: 'NotImplemented', target: '$search' });
  });
});

describe('groupby by a navigation path: binding', () => {
  // (Thing's Twin is single-valued, its Parts a collection)
  const refused = (apply: string): ODataError => {
    try {
      validateQuery(parseQuery(`$apply=${encodeURIComponent(apply)}`), Thing);
    } catch (error) {
      if (error instanceof ODataError) return error;
      throw error;
    }
    throw new Error(`${apply} bound`);
  };
  const at = (apply: string, part: string, from = 0): number => apply.indexOf(part, from);

  it('binds paths through single-valued navigations, one and two steps deep', () => {
    const bound = validateQuery(
      parseQuery(`$apply=${encodeURIComponent('groupby((S,Twin/S,Twin/Twin/Id),aggregate($count as N))')}`),
      Thing,
    );
    const step = bound.apply!.steps[0]!;
    expect(step.kind === 'groupby' && step.keys.map((k) => [...k.path, k.property.name].join('/'))).toEqual([
      'S',
      'Twin/S',
      'Twin/Twin/Id',
    ]);
    const output = bound.apply!.output;
    expect([...output.properties.keys()]).toEqual(['S', 'N']);
    const twin = output.navigation.get('Twin')!;
    expect([...twin.target().properties.keys()]).toEqual(['S']);
    expect([...twin.target().navigation.get('Twin')!.target().properties.keys()]).toEqual(['Id']);
    expect(bound.apply!.nested).toEqual([twin]);
  });

  it('refuses a collection on the way, a path given twice, an alias that is the navigation, and what is no path', () => {
    const collection = 'groupby((Parts/Q),aggregate($count as N))';
    expect(refused(collection)).toMatchObject({
      code: 'NotImplemented',
      target: '$apply',
      position: at(collection, 'Parts'),
      message: expect.stringContaining('Grouping by a path through the collection Parts is not supported'),
    });
    const deeper = 'groupby((Twin/Parts/Q))';
    expect(refused(deeper)).toMatchObject({ code: 'NotImplemented', position: at(deeper, 'Parts') });
    const twice = 'groupby((Twin/S,S,Twin/S))';
    expect(refused(twice)).toMatchObject({
      code: 'InvalidSyntax',
      target: '$apply',
      position: at(twice, 'Twin/S', 10),
      message: expect.stringContaining('Twin/S is grouped by twice'),
    });
    const alias = 'groupby((Twin/S),aggregate($count as Twin))';
    expect(refused(alias)).toMatchObject({
      code: 'InvalidSyntax',
      position: at(alias, 'Twin)'),
      message: expect.stringContaining('The alias Twin is also the navigation a grouping path goes through'),
    });
    const entity = 'groupby((Twin))';
    expect(refused(entity)).toMatchObject({ code: 'TypeMismatch', position: at(entity, 'Twin') });
    const unknown = 'groupby((Twin/Nope))';
    expect(refused(unknown)).toMatchObject({ target: '$apply', position: at(unknown, 'Nope') });
    const concat = 'concat(groupby((Twin/S)),aggregate($count as N))';
    expect(refused(concat)).toMatchObject({ code: 'NotImplemented', position: at(concat, 'groupby') });
  });
});
