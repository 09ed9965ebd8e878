// `$search` over rows: an entity matches a term when the term's words stand in a row, in that order, in the search
// text (searchText: lower-cased, split on White_Space and ASCII punctuation) of one of its searchable properties. This
// is what `$search` means on every backend (docs/query-language.md "$search"); the SQL dialects compute the same text.
import type { BoundSearch, BoundSearchExpr } from '../../validate/bound.js';
import { searchText } from '../../values/text.js';
import type { Row } from './working-values.js';

type Node =
  | { readonly kind: 'needle'; readonly needle: string }
  | { readonly kind: 'not'; readonly operand: Node }
  | { readonly kind: 'and' | 'or'; readonly left: Node; readonly right: Node };

/** Whether a row matches `$search`; each property's search text is made once per row, when first needed. */
export function searchPredicate(search: BoundSearch): (row: Row) => boolean {
  const prepare = (e: BoundSearchExpr): Node =>
    e.kind === 'words'
      ? { kind: 'needle', needle: ` ${e.words.join(' ')} ` }
      : e.kind === 'not'
        ? { kind: 'not', operand: prepare(e.operand) }
        : { kind: e.kind, left: prepare(e.left), right: prepare(e.right) };
  const tree = prepare(search.expr);
  const names = search.properties.map((p) => p.name);
  return (row) => {
    const texts: (string | undefined)[] = new Array<string | undefined>(names.length);
    const textAt = (i: number): string => {
      let text = texts[i];
      if (text === undefined) {
        const value = row[names[i]!];
        text = texts[i] = typeof value === 'string' ? searchText(value) : '';
      }
      return text;
    };
    const matches = (node: Node): boolean => {
      switch (node.kind) {
        case 'needle':
          for (let i = 0; i < names.length; i++) if (textAt(i).includes(node.needle)) return true;
          return false;
        case 'not':
          return !matches(node.operand);
        case 'and':
          return matches(node.left) && matches(node.right);
        case 'or':
          return matches(node.left) || matches(node.right);
      }
    };
    return matches(tree);
  };
}
