// $compute bound: the computed properties' types, their use in $select, $filter and $orderby (where a filter or an
// order reads the expression itself, a new copy each time), and the mistakes, each a 400 or 501 naming $compute and
// the position.
import { describe, expect, it } from 'vitest';
import { isODataError, parseQuery, validateQuery, type BoundExpr } from '../../src/index.js';
import { runQuery } from '../../src/backends/memory/compile.js';
import { Item } from './fixtures.js';

const bind = (query: string) => validateQuery(parseQuery(query), Item);

function errorOf(run: () => unknown): { code: string; target?: string; position?: number; message: string } {
  try {
    run();
  } catch (error) {
    if (isODataError(error))
      return {
        code: error.code,
        message: error.message,
        ...(error.target === undefined ? {} : { target: error.target }),
        ...(error.position === undefined ? {} : { position: error.position }),
      };
    throw error;
  }
  throw new Error('expected an ODataError');
}

/** Whether the tree names a property of this name anywhere. */
function names(expr: BoundExpr, name: string): boolean {
  return JSON.stringify(expr, (key, value: unknown) => (key === 'target' ? undefined : value)).includes(
    `"name":"${name}"`,
  );
}

describe('$compute', () => {
  it('gives each alias the type of its expression, selected by default and by name', () => {
    const bound = bind('$compute=Price mul 2 as Gross,length(Name) as Letters');
    expect(bound.compute!.map((c) => [c.property.name, c.property.type, c.property.nullable])).toEqual([
      ['Gross', 'Edm.Decimal', true],
      ['Letters', 'Edm.Int32', false],
    ]);
    // without $select: every property and the computed ones after them
    expect(bound.select.slice(-2).map((p) => p.name)).toEqual(['Gross', 'Letters']);
    const selected = bind('$compute=Price mul 2 as Gross,length(Name) as Letters&$select=Id,Letters');
    expect(selected.select.map((p) => p.name)).toEqual(['Id', 'Letters']);
    expect(bind('$compute=Price mul 2 as Gross&$select=*').select.map((p) => p.name)).toContain('Gross');
  });

  it('reads the expression where $filter and $orderby name the alias, a new node each time', () => {
    const bound = bind('$compute=Price mul 2 as Gross&$filter=Gross gt 10 and Gross lt 100&$orderby=Gross desc');
    const filter = bound.filter as Extract<BoundExpr, { kind: 'logical' }>;
    expect(names(filter, 'Gross')).toBe(false);
    expect(names(filter, 'Price')).toBe(true);
    const left = (filter.left as Extract<BoundExpr, { kind: 'comparison' }>).left;
    const right = (filter.right as Extract<BoundExpr, { kind: 'comparison' }>).left;
    expect(left.kind).toBe('arithmetic');
    expect(left).toEqual(right);
    expect(left).not.toBe(right);
    expect(bound.orderBy[0]!.expr.kind).toBe('arithmetic');
    expect(bound.orderBy[0]!.expr).not.toBe(bound.compute![0]!.expr);
  });

  it('is computed by the memory backend for the rows it projects', () => {
    const rows = [
      { Id: 'a', Name: 'pump', Active: true, Price: '2.5' },
      { Id: 'b', Name: 'valve', Active: true, Price: null },
      { Id: 'c', Name: 'seal', Active: false, Price: '60' },
    ];
    const bound = bind(
      '$compute=Price mul 2 as Gross,length(Name) as Letters&$filter=Gross lt 100&$orderby=Gross desc&$select=Id,Gross,Letters',
    );
    expect(runQuery(rows, bound).value).toEqual([{ Id: 'a', Gross: '5', Letters: 4 }]);
    expect(runQuery(rows, bind('$compute=Price mul 2 as Gross&$orderby=Gross desc&$select=Id,Gross')).value).toEqual([
      { Id: 'c', Gross: '120' },
      { Id: 'a', Gross: '5' },
      { Id: 'b', Gross: null },
    ]);
  });

  it('refuses mistakes with $compute and the position', () => {
    expect(errorOf(() => bind('$compute=Price mul 2 as Name'))).toMatchObject({
      code: 'InvalidSyntax',
      target: '$compute',
      position: 15,
      message: expect.stringContaining('The alias Name is already a property of Item'),
    });
    expect(errorOf(() => bind('$compute=1 as X,2 as X'))).toMatchObject({
      target: '$compute',
      position: 12,
      message: expect.stringContaining('The alias X is given twice'),
    });
    expect(errorOf(() => bind('$compute=null as X'))).toMatchObject({ code: 'TypeMismatch', target: '$compute' });
    expect(errorOf(() => bind('$compute=Nope add 1 as X'))).toMatchObject({
      code: 'UnknownProperty',
      target: '$compute',
    });
    expect(errorOf(() => bind('$compute=Lines/$count as N'))).toMatchObject({
      code: 'NotImplemented',
      target: '$compute',
      message: expect.stringContaining('reads through a navigation'),
    });
    // the other options see the aliases, and only those given
    expect(errorOf(() => bind('$compute=1 as X&$filter=Y eq 1'))).toMatchObject({ target: '$filter' });
  });
});
