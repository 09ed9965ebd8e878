// Generation quality (issue 19): every generated filter binds, most split the rows they run over, and every operator
// and function the generator knows is used. The figures are printed for docs/testing.md.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuery, validateQuery } from '../../src/index.js';
import { runQuery } from '../../src/backends/memory/index.js';
import { POLineItem, Part, PurchaseOrder, WorkOrder } from '../../src/server/model.js';
import {
  dataSetOf,
  filterFunctions,
  filterOf,
  filterOperators,
  moreFilterFunctions,
  oracle,
  queryOf,
  rowsOf,
} from '../../src/testing/index.js';
import { Thing } from '../backends/sql/fixtures.js';

const CASES = 2000;

describe('generated filters', () => {
  for (const entityType of [Thing, POLineItem, Part, WorkOrder]) {
    it(`over ${entityType.name}: all bind, most split the rows, every operator and function appears`, () => {
      const cases = fc.sample(fc.tuple(rowsOf(entityType, { minLength: 10, maxLength: 10 }), filterOf(entityType)), {
        numRuns: CASES,
        seed: 19,
      });
      let split = 0;
      const uses = new Map<string, number>();
      for (const [rows, filter] of cases) {
        const bound = validateQuery(parseQuery(`$filter=${encodeURIComponent(filter)}`), entityType); // throws if not
        const kept = runQuery(rows, bound).value.length;
        if (kept > 0 && kept < rows.length) split++;
        for (const name of [...filterOperators, ...filterFunctions]) {
          const pattern = name === 'negate' ? /(^|[ (])-[A-Za-z(]/ : new RegExp(`\\b${name}\\b`);
          if (pattern.test(filter.replace(/'(?:[^']|'')*'/g, "''"))) uses.set(name, (uses.get(name) ?? 0) + 1);
        }
      }
      const perThousand = Object.fromEntries([...uses].map(([name, n]) => [name, Math.round((n * 1000) / CASES)]));
      console.log(
        `${entityType.name}: ${((100 * split) / CASES).toFixed(1)}% split the rows; per 1,000 cases:`,
        perThousand,
      );
      expect(split / CASES).toBeGreaterThanOrEqual(0.6);
      // what the entity type has no property for cannot appear (year of a type without dates)
      const possible = [...filterOperators, ...filterFunctions].filter((name) => applicable(entityType, name));
      expect(possible.filter((name) => !uses.has(name))).toEqual([]);
    });
  }

  it('with casts and mixed types, every filter still binds, and both appear', () => {
    for (const entityType of [Thing, POLineItem]) {
      const cases = fc.sample(
        fc.tuple(
          rowsOf(entityType, { minLength: 10, maxLength: 10 }),
          filterOf(entityType, { casts: true, mixedTypes: true }),
        ),
        { numRuns: CASES, seed: 23 },
      );
      let casts = 0;
      let mixed = 0;
      let split = 0;
      for (const [rows, filter] of cases) {
        const bound = validateQuery(parseQuery(`$filter=${encodeURIComponent(filter)}`), entityType); // throws if not
        const kept = runQuery(rows, bound).value.length;
        if (kept > 0 && kept < rows.length) split++;
        if (/\bcast\(/.test(filter)) casts++;
        // an item of another type than the list's others, or 20 places (a Double cannot tell it from its neighbour)
        if (/ in \([^)]*(\d\.\d{20}|\de0|\d{4}-\d\d-\d\dT)/.test(filter)) mixed++;
      }
      console.log(
        `${entityType.name} with casts and mixed types: ${((100 * split) / CASES).toFixed(1)}% split the rows; per 1,000 cases: ${Math.round((casts * 1000) / CASES)} casts, ${Math.round((mixed * 1000) / CASES)} mixed or near items`,
      );
      expect(casts).toBeGreaterThan(CASES / 100);
      expect(mixed).toBeGreaterThan(CASES / 100);
    }
  });

  it('through navigation and with every function, every filter still binds, and each construct appears', () => {
    for (const entityType of [Thing, POLineItem, PurchaseOrder]) {
      const options = { navigation: 2, functions: [...filterFunctions, ...moreFilterFunctions] };
      const cases = fc.sample(
        fc.tuple(dataSetOf(entityType, { minLength: 10, maxLength: 10, navigation: 2 }), filterOf(entityType, options)),
        { numRuns: CASES, seed: 29 },
      );
      let split = 0;
      const constructs: Record<string, RegExp> = {
        path: /\b[A-Z]\w*\/[A-Z]/,
        any: /\/any\(/,
        all: /\/all\(/,
        count: /\/\$count/,
        ...Object.fromEntries(moreFilterFunctions.map((name) => [name, new RegExp(`\\b${name}\\(`)])),
      };
      const uses = new Map<string, number>();
      for (const [{ rows, related }, filter] of cases) {
        const query = `$filter=${encodeURIComponent(filter)}`;
        validateQuery(parseQuery(query), entityType); // throws if not
        const kept = oracle(entityType, rows, query, related).rows.length;
        if (kept > 0 && kept < rows.length) split++;
        const text = filter.replace(/'(?:[^']|'')*'/g, "''");
        for (const [name, pattern] of Object.entries(constructs))
          if (pattern.test(text)) uses.set(name, (uses.get(name) ?? 0) + 1);
      }
      const perThousand = Object.fromEntries([...uses].map(([name, n]) => [name, Math.round((n * 1000) / CASES)]));
      console.log(
        `${entityType.name} through navigation, every function: ${((100 * split) / CASES).toFixed(1)}% split the rows; per 1,000 cases:`,
        perThousand,
      );
      expect(split / CASES).toBeGreaterThanOrEqual(0.4);
      for (const name of ['path', 'any', 'all', 'count', 'matchesPattern', 'isof', 'case'])
        expect(uses.get(name) ?? 0).toBeGreaterThan(CASES / 100);
    }
  });

  it('$apply pipelines bind, and every transformation and aggregation method appears', () => {
    for (const entityType of [Thing, POLineItem, WorkOrder]) {
      const queries = fc.sample(queryOf(entityType, { include: ['$apply', '$orderby', '$top', '$skip', '$count'] }), {
        numRuns: CASES,
        seed: 31,
      });
      const constructs: Record<string, RegExp> = {
        filter: /^filter\(/,
        compute: /compute\(/,
        groupby: /groupby\(/,
        aggregate: /aggregate\(/,
        sum: / with sum /,
        average: / with average /,
        min: / with min /,
        max: / with max /,
        countdistinct: / with countdistinct /,
        count: /\$count as/,
        orderby: /\/orderby\(/,
        'top or skip': /\/(top|skip)\(/,
      };
      const uses = new Map<string, number>();
      let applied = 0;
      for (const query of queries) {
        validateQuery(parseQuery(query.text), entityType); // throws if not
        const apply = query.options.$apply;
        if (apply === undefined) continue;
        applied++;
        for (const [name, pattern] of Object.entries(constructs))
          if (pattern.test(apply)) uses.set(name, (uses.get(name) ?? 0) + 1);
      }
      const perThousand = Object.fromEntries([...uses].map(([name, n]) => [name, Math.round((n * 1000) / applied)]));
      console.log(`${entityType.name}: ${applied} of ${CASES} queries with $apply; per 1,000 of them:`, perThousand);
      expect(applied).toBeGreaterThan(CASES / 5);
      for (const name of Object.keys(constructs)) expect(uses.get(name) ?? 0).toBeGreaterThan(applied / 50);
    }
  });

  it('$expand trees bind, nested with options of their own', () => {
    for (const entityType of [Thing, PurchaseOrder]) {
      const queries = fc.sample(queryOf(entityType, { navigation: 2, include: ['$expand', '$select'] }), {
        numRuns: CASES,
        seed: 37,
      });
      let expanded = 0;
      let nested = 0;
      let withOptions = 0;
      for (const query of queries) {
        validateQuery(parseQuery(query.text), entityType); // throws if not
        const expand = query.options.$expand;
        if (expand === undefined) continue;
        expanded++;
        if (/\$expand=/.test(expand)) nested++;
        if (/\$(filter|orderby|top|skip|select)=/.test(expand)) withOptions++;
      }
      console.log(
        `${entityType.name}: ${expanded} of ${CASES} queries expand, ${nested} of them nested, ${withOptions} with options`,
      );
      expect(expanded).toBeGreaterThan(CASES / 4);
      expect(nested).toBeGreaterThan(expanded / 20);
      expect(withOptions).toBeGreaterThan(expanded / 4);
    }
  });

  it('with nulls, a bare null appears where a value is taken, and every filter still binds', () => {
    let withNull = 0;
    for (const entityType of [Thing, POLineItem]) {
      for (const filter of fc.sample(filterOf(entityType, { nulls: true }), { numRuns: 1000, seed: 5 })) {
        validateQuery(parseQuery(`$filter=${encodeURIComponent(filter)}`), entityType); // throws if not
        if (/(^|[ (,])null\b/.test(filter.replace(/'(?:[^']|'')*'/g, "''"))) withNull++;
      }
    }
    expect(withNull).toBeGreaterThan(300);
  });

  it('whole queries bind, and a paged one orders by the key last', () => {
    for (const query of fc.sample(
      queryOf(POLineItem, { include: ['$filter', '$orderby', '$select', '$top', '$skip', '$count'] }),
      { numRuns: 500, seed: 7 },
    )) {
      validateQuery(parseQuery(query.text), POLineItem);
      if (query.options.$top !== undefined || query.options.$skip !== undefined) {
        const ordered = (query.options.$orderby ?? '').split(',').map((item) => item.split(' ')[0]);
        expect(ordered).toEqual(expect.arrayContaining(['PONumber', 'LineNumber']));
      }
    }
  });
});

/** Whether a name can appear in a filter over the entity type (its properties give it an argument). */
function applicable(entityType: typeof Thing, name: string): boolean {
  const types = new Set([...entityType.properties.values()].map((p) => p.type));
  const temporal = types.has('Edm.Date') || types.has('Edm.DateTimeOffset');
  switch (name) {
    case 'year':
    case 'month':
    case 'day':
      return temporal;
    case 'hour':
    case 'minute':
    case 'second':
    case 'date':
      return types.has('Edm.DateTimeOffset') || (name !== 'date' && types.has('Edm.TimeOfDay'));
    case 'round':
    case 'floor':
    case 'ceiling':
    case 'divby':
    case 'div':
    case 'mod':
    case 'mul':
    case 'add':
    case 'sub':
    case 'negate':
      return types.has('Edm.Decimal') || types.has('Edm.Int32') || types.has('Edm.Double') || types.has('Edm.Int64');
    default:
      return true;
  }
}
