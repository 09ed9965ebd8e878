// `$search` bound to an entity type: each term's words (lower-cased and split as searchText in src/values/text.ts
// splits a property's text), and the properties the model marks searchable, which every term is looked for in.
import type { SearchExpr, Span } from '../syntax/ast.js';
import type { EntityType } from '../model/schema.js';
import { atPosition, ODataError } from '../errors.js';
import { searchWords } from '../values/text.js';
import type { BoundSearch, BoundSearchExpr } from './bound.js';

/**
 * Binds `$search` to `type`. A type without searchable properties is a 501 (the resource does not offer search); a
 * term without a letter or digit (`,`, `"-"`) is a 400 at its position. `at`: the `search(...)` transformation of
 * `$apply` this is (its errors then name `$apply`, the 501 at the transformation's position).
 */
export function bindSearch(expr: SearchExpr, type: EntityType, at?: { readonly transformation: Span }): BoundSearch {
  const target = at === undefined ? '$search' : '$apply';
  const properties = [...type.properties.values()].filter((p) => p.searchable === true);
  if (properties.length === 0) {
    const what = `${at === undefined ? '$search' : 'The search transformation'} is not offered for ${type.name}: none of its properties is searchable`;
    throw new ODataError(
      'NotImplemented',
      at === undefined ? what : atPosition(what, at.transformation.start, target),
      at === undefined ? { target } : { target, position: at.transformation.start },
    );
  }
  const bind = (e: SearchExpr): BoundSearchExpr => {
    switch (e.kind) {
      case 'word':
      case 'phrase':
      case 'text': {
        const words = searchWords(e.text);
        if (words.length === 0) {
          throw new ODataError(
            'InvalidSyntax',
            atPosition(
              `The search term ${JSON.stringify(e.text)} has no letter or digit to search for`,
              e.span.start,
              target,
              'words are separated by spaces and ASCII punctuation, which are not searched',
            ),
            { target, position: e.span.start },
          );
        }
        // quoted text: each of its words (the client's text, not a phrase); a word or a phrase: its words in a row
        if (e.kind !== 'text') return { kind: 'words', words };
        return words
          .map((word): BoundSearchExpr => ({ kind: 'words', words: [word] }))
          .reduce((left, right) => ({ kind: 'and', left, right }));
      }
      case 'not':
        return { kind: 'not', operand: bind(e.operand) };
      case 'and':
      case 'or':
        return { kind: e.kind, left: bind(e.left), right: bind(e.right) };
    }
  };
  return { properties, expr: bind(expr) };
}

/** Two searches of one entity type, both to match (`$apply`'s leading search transformations, read as one). */
export function andSearch(left: BoundSearch, right: BoundSearch): BoundSearch {
  return { properties: left.properties, expr: { kind: 'and', left: left.expr, right: right.expr } };
}
