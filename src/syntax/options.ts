// What every parse of a query option may be given: its nesting limit, and the values of parameter aliases. A module of
// its own so that the grammars (parser.ts and search.ts) share it without importing each other: parser.ts reads
// `$apply`'s search transformation with search.ts.
import type { Expr } from './ast.js';

export interface ParseOptions {
  /** Maximum nesting of parentheses, unary operators, calls and lambdas (default 100). */
  readonly maxDepth?: number;
  /** Values of `@alias` parameters, attached to the alias nodes that name them. */
  readonly aliases?: ReadonlyMap<string, Expr>;
}

export const defaultMaxDepth = 100;
