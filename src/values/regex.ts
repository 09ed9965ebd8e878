// matchesPattern's regular expressions (SEMANTICS.md: an ECMAScript pattern with the u flag, on code points), run in
// time linear in the value's length whatever the pattern, and written for the SQL dialects that can say the same.
//
//   parsePattern(text)     the pattern as `new RegExp(text, 'u')` reads it, or `invalid` (with the position) or
//                          `unsupported` (a construct that needs backtracking, or an automaton above the size limit)
//   compileMatcher(p)      { test(s) }: exactly `new RegExp(text, 'u').test(s)`, in linear time
//   toPostgresRegex(p)     the pattern for PostgreSQL's `~`
//   toMysqlRegex(p)        the pattern for MariaDB's `REGEXP`, or `{ unsupported }` when PCRE2 could backtrack
//                          without bound on it
//
// Supported: literals and every escape of the u grammar (\d \D \w \W \s \S, \p{...} \P{...}, \f \n \r \t \v,
// \cX, \0, \xHH, \uXXXX, \u{...}, escaped syntax characters), `.`, classes with ranges and negation, ^ and $ (no m
// flag), \b and \B, capturing, named and non-capturing groups, alternation, and * + ? {n} {n,} {n,m}, greedy or
// lazy. Refused (unsupported): backreferences (\1, \k<name>) and lookahead/lookbehind, which a finite automaton
// cannot run; inline modifiers (?i:...); a program above MAX_PROGRAM_SIZE instructions; groups nested deeper than
// MAX_NESTING; more than MAX_PROPERTIES different \p{...} properties.
export { parsePattern, MAX_PROGRAM_SIZE, MAX_NESTING, MAX_PROPERTIES } from './regex/parse.js';
export type { ParseResult, Pattern, RegexNode, Assertion } from './regex/parse.js';
export { compileMatcher } from './regex/match.js';
export type { Matcher, MatcherOptions } from './regex/match.js';
export { toPostgresRegex, toMysqlRegex, mysqlBacktrackingPaths, MAX_BACKTRACKING_PATHS } from './regex/sql.js';
export type { Translation } from './regex/sql.js';
export type { CodePointSet } from './regex/charset.js';
