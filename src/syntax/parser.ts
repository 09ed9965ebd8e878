// The Chevrotain grammar for OData 4.01 `$filter`, `$orderby`, `$select` and `$expand` values, building the
// syntax tree with embedded actions (no CST: they are about half again as fast as a CST visitor).
// Rules are named after the OASIS ABNF rules they implement. The ABNF's `commonExpr` is flat and
// ambiguous; precedence comes from OData 4.01 Part 2 §5.1.1.16 (highest first): primary (`/`, `has`,
// `in`, calls), unary (`-`, `not`), multiplicative, additive, relational, equality, `and`, `or`.
// All binary operators associate to the left.
import {
  EmbeddedActionsParser,
  EOF,
  tokenMatcher,
  type IOrAlt,
  type IParserErrorMessageProvider,
  type IToken,
  type TokenType,
} from 'chevrotain';
import { atPosition, errorAt, ODataError } from '../errors.js';
import {
  aggregationMethods,
  canonicalFunctions,
  type AggregateItem,
  type ApplyTransformation,
  type ComputeItem,
  type PathExpr,
  type CanonicalFunctionName,
  type ExpandItem,
  type Expr,
  type FunctionParameter,
  type FunctionSegment,
  type BinaryOperator,
  type KeySegment,
  type LiteralValue,
  type NestedExpandOptions,
  type NestedSelectOptions,
  type OrderByItem,
  type PathRoot,
  type PathSegment,
  type SearchExpr,
  type SelectItem,
  type SelectSegment,
  type Span,
} from './ast.js';
import * as T from './lexer.js';
import {
  decodeBinary,
  decodeDate,
  decodeDateTimeOffset,
  decodeDuration,
  decodeEnum,
  decodeGeo,
  decodeGuid,
  decodeNumber,
  decodeSpecialDouble,
  decodeString,
  decodeTimeOfDay,
  type LiteralContext,
} from './literals.js';
import { suggest } from '../values/suggest.js';
import { defaultMaxDepth, type ParseOptions } from './options.js';
import { parseSearchArgument, searchArgumentEnd } from './search.js';

/** Canonical function names by lower-case spelling (function names are case-insensitive in 4.01). */
const canonicalByLowerName: ReadonlyMap<string, CanonicalFunctionName> = new Map(
  canonicalFunctions.map((name) => [name.toLowerCase(), name]),
);

/**
 * The end of a token, exclusive. The lexer tracks only start offsets (cheaper), so the end is
 * derived from the image: the only place that turns tokens into half-open spans.
 */
export function tokenEnd(token: IToken): number {
  return token.startOffset + token.image.length;
}

export function tokenSpan(first: IToken, last: IToken = first): Span {
  return { start: first.startOffset, end: tokenEnd(last) };
}

const span = (start: number, end: number): Span => ({ start, end });

const implicitRoot: PathRoot = { kind: 'implicit' };

interface PathBuilder {
  root: PathRoot;
  readonly segments: PathSegment[];
  /** Set when the member expression is not a path: an alias, a call or a type name. */
  result: Expr | undefined;
}

/** Subrule arguments for a whole `commonExpr` (every operator binds), hoisted to allocate once. */
const weakest = { ARGS: [1] as [number] };

/** Binding strength by `tokenTypeIdx`, for the precedence-climbing loop. */
const precedenceByTokenIndex: number[] = [];
for (const [token, level] of T.binaryPrecedence) precedenceByTokenIndex[token.tokenTypeIdx!] = level;

interface RawArgument {
  readonly first: Expr;
  /** The value after `=` (`first` is then the parameter name). */
  readonly assigned: Expr | undefined;
  /** The result after `:` in a `case` branch. */
  readonly branch: Expr | undefined;
}

interface RawArguments {
  readonly items: readonly RawArgument[];
  readonly span: Span;
}

/** The plain name of a one-property path (`Name`), if the expression is one. */
function simpleName(expr: Expr): string | undefined {
  if (expr.kind !== 'path' || expr.root.kind !== 'implicit' || expr.segments.length !== 1) return undefined;
  const segment = expr.segments[0]!;
  return segment.kind === 'property' ? segment.name : undefined;
}

/** The last argument of cast/isof: a qualified type name, or a plain name (`cast(Customer)`). */
function typeNameOf(expr: Expr): Expr | undefined {
  if (expr.kind === 'typeName') return expr;
  const name = simpleName(expr);
  return name === undefined ? undefined : { kind: 'typeName', name, span: expr.span };
}

function describeNode(expr: Expr): string {
  return expr.kind === 'call'
    ? `the call ${expr.name}(...)`
    : expr.kind === 'alias'
      ? `the alias ${expr.name}`
      : 'a type name';
}

const isBlank = (char: string | undefined): boolean => char === ' ' || char === '\t';

/** Error messages name what was expected in words a person uses; `translateError` adds what was found and where. */
const errorMessages: IParserErrorMessageProvider = {
  buildMismatchTokenMessage: ({ expected }) => `expected ${expected.LABEL ?? expected.name}`,
  buildNotAllInputParsedMessage: () => 'expected an operator or the end of the value',
  buildNoViableAltMessage: ({ ruleName }) => `expected ${expectationOf(ruleName)}`,
  buildEarlyExitMessage: ({ ruleName }) => `expected ${expectationOf(ruleName)}`,
};

function expectationOf(ruleName: string): string {
  switch (ruleName) {
    case 'primaryExpr':
    case 'unaryExpr':
      return 'an operand: a property, a literal, a function call or an opening parenthesis';
    case 'selectItem':
    case 'selectSegment':
      return "a property name or '*'";
    case 'expandItem':
    case 'expandSegment':
      return "a navigation property name or '*'";
    case 'nestedOptions':
      return 'a nested option such as $filter=...';
    case 'keyPredicate':
      return 'a key value';
    case 'inRight':
      return "a list in parentheses such as ('a','b'), a JSON array or a collection";
    case 'transformation':
      return transformationExpectation[currentTransformation] ?? 'the parameters of the transformation';
    case 'aggregateItem':
      return 'an aggregate such as Amount with sum as Total, or $count as Count';
    default:
      return 'a valid expression';
  }
}

export { defaultMaxDepth, type ParseOptions } from './options.js';

class ODataParser extends EmbeddedActionsParser {
  /** The value being parsed, for whitespace checks. */
  private text = '';
  private target = '$filter';
  private depth = 0;
  private maxDepth = defaultMaxDepth;
  private aliases: ReadonlyMap<string, Expr> | undefined;
  /** Lambda range variables in scope, innermost last. */
  private variables: string[] = [];
  /** The canonical function whose arguments are being parsed (innermost last), for `cast`/`isof` type names. */
  private callees: (CanonicalFunctionName | undefined)[] = [];
  /** The canonical function the next `argumentList` belongs to (set right before it). */
  private nextCallee: CanonicalFunctionName | undefined;
  /** Where each nested option's name starts, by the options object it was parsed into (for errors about it). */
  private optionPositions = new WeakMap<object, Map<string, number>>();
  /** The segment list the next `pathSegment` appends to (set right before it). */
  private nextSegments: PathSegment[] = [];
  /** `$apply`'s search arguments, read before the lexer (blankSearchArguments), by the position of their `(`. */
  private searches: ReadonlyMap<number, SearchArgument> = new Map();

  constructor() {
    super(T.allTokens, {
      maxLookahead: 2,
      recoveryEnabled: false,
      skipValidations: false,
      errorMessageProvider: errorMessages,
    });
    this.performSelfAnalysis();
  }

  begin(
    text: string,
    tokens: IToken[],
    target: string,
    options: ParseOptions | undefined,
    searches: ReadonlyMap<number, SearchArgument> = new Map(),
  ): void {
    this.text = text;
    this.searches = searches;
    this.target = target;
    this.depth = 0;
    this.maxDepth = options?.maxDepth ?? defaultMaxDepth;
    this.aliases = options?.aliases;
    this.variables = [];
    this.callees = [];
    this.paths = [];
    this.input = tokens;
  }

  // ── helpers (called only inside ACTION) ──────────────────────────────────

  private fail(
    code: 'InvalidSyntax' | 'UnknownFunction' | 'LimitExceeded' | 'NotImplemented' | 'DuplicateOption',
    position: number,
    what: string,
    hint?: string,
  ): never {
    throw errorAt(code, what, this.target, position, hint);
  }

  /** ABNF RWS around binary operators: `a eq b`, never `a eq'b'`. */
  private requireSpaceAround(op: IToken, allowOpenAfter = false): void {
    const before = this.text[op.startOffset - 1];
    if (!isBlank(before)) this.fail('InvalidSyntax', op.startOffset, `Expected a space before '${op.image}'`);
    const after = this.text[tokenEnd(op)];
    if (!isBlank(after) && !(allowOpenAfter && (after === '(' || after === '['))) {
      this.fail('InvalidSyntax', tokenEnd(op), `Expected a space after '${op.image}'`);
    }
  }

  private enter(at: IToken): void {
    if (++this.depth > this.maxDepth) {
      this.fail(
        'LimitExceeded',
        at.startOffset,
        `Expression nesting deeper than ${this.maxDepth} level${this.maxDepth === 1 ? '' : 's'}`,
      );
    }
  }

  private leave(): void {
    this.depth--;
  }

  private literalContext(): LiteralContext {
    return { target: this.target };
  }

  private endOfLast(): number {
    return tokenEnd(this.LA(0));
  }

  // ── boolCommonExpr / commonExpr ─────────────────────────────────────────────

  /**
   * ABNF `commonExpr` / `boolCommonExpr` with its infix operator rules (`orExpr`, `andExpr`, `eqExpr`,
   * `neExpr`, `ltExpr`..., `addExpr`..., `modExpr`) by precedence climbing: one rule level per operand
   * instead of one per precedence level, about twice as fast (bench/parse.bench.ts).
   */
  readonly commonExpr = this.RULE('commonExpr', (): Expr => this.SUBRULE(this.binaryExpr, weakest));

  /** Operands joined by operators that bind at least as tightly as `minimum`; left-associative. */
  private readonly binaryExpr = this.RULE('binaryExpr', (minimum: number): Expr => {
    let left = this.SUBRULE(this.unaryExpr);
    this.MANY({
      GATE: () => (precedenceByTokenIndex[this.LA(1).tokenType.tokenTypeIdx!] ?? 0) >= minimum,
      DEF: () => {
        const op = this.CONSUME(T.BinaryOperator);
        // Inline RECORDING_PHASE checks instead of ACTION closures on this hottest path (no allocation).
        const level = this.RECORDING_PHASE ? 0 : precedenceByTokenIndex[op.tokenType.tokenTypeIdx!]!;
        const right = this.SUBRULE2(this.binaryExpr, { ARGS: [level + 1] });
        if (!this.RECORDING_PHASE) {
          this.requireSpaceAround(op);
          const operator = op.image.toLowerCase() as BinaryOperator;
          left = { kind: 'binary', operator, left, right, span: span(left.span.start, right.span.end) };
        }
      },
    });
    return left;
  });

  /** ABNF `notExpr` and `negateExpr`: `not` binds tighter than `eq` (SEMANTICS.md). */
  private unaryAlternatives: IOrAlt<Expr>[] | undefined;
  private primaryAlternatives: IOrAlt<Expr>[] | undefined;

  private readonly unaryExpr = this.RULE('unaryExpr', (): Expr =>
    this.OR({
      MAX_LOOKAHEAD: 1,
      IGNORE_AMBIGUITIES: true, // `not` is also a Name; the first alternative takes it
      // cached: these alternatives capture no locals, so one array serves every call
      DEF: (this.unaryAlternatives ??= [
        {
          ALT: () => {
            const op = this.CONSUME(T.Not);
            this.ACTION(() => {
              const after = this.text[tokenEnd(op)];
              if (!isBlank(after) && after !== '(') {
                this.fail('InvalidSyntax', tokenEnd(op), "Expected a space after 'not'");
              }
              this.enter(op);
            });
            const operand = this.SUBRULE(this.unaryExpr);
            return this.ACTION(() => {
              this.leave();
              return { kind: 'not', operand, span: span(op.startOffset, operand.span.end) } as const;
            });
          },
        },
        {
          ALT: () => {
            const op = this.CONSUME(T.Minus);
            this.ACTION(() => this.enter(op));
            const operand = this.SUBRULE2(this.unaryExpr);
            return this.ACTION(() => {
              this.leave();
              return { kind: 'negate', operand, span: span(op.startOffset, operand.span.end) } as const;
            });
          },
        },
        { ALT: () => this.SUBRULE(this.postfixExpr) },
      ]),
    }),
  );

  /** ABNF `hasExpr` and `inExpr`, which the 4.01 precedence table puts with the primary operators. */
  private readonly postfixExpr = this.RULE('postfixExpr', (): Expr => {
    let left = this.SUBRULE(this.primaryExpr);
    this.MANY(() => {
      this.OR([
        {
          ALT: () => {
            const op = this.CONSUME(T.Has);
            const right = this.SUBRULE2(this.primaryExpr);
            left = this.ACTION(() => {
              this.requireSpaceAround(op);
              return { kind: 'binary', operator: 'has', left, right, span: span(left.span.start, right.span.end) };
            });
          },
        },
        {
          ALT: () => {
            const op = this.CONSUME(T.In);
            this.ACTION(() => this.requireSpaceAround(op, true));
            const right = this.SUBRULE(this.inRight);
            left = this.ACTION(() => ({ kind: 'in', left, right, span: span(left.span.start, right.span.end) }));
          },
        },
      ]);
    });
    return left;
  });

  /** Right of `in`: ABNF `listExpr` (here any expressions, SEMANTICS.md), a JSON array, or a collection. */
  private readonly inRight = this.RULE('inRight', (): Expr =>
    this.OR({
      MAX_LOOKAHEAD: 1,
      IGNORE_AMBIGUITIES: true, // '(' right of `in` opens a list, not a parenthesized expression
      DEF: [
        {
          ALT: () => {
            const open = this.CONSUME(T.LParen);
            this.ACTION(() => this.enter(open));
            const items: Expr[] = [];
            this.MANY_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.binaryExpr, weakest)) });
            const close = this.CONSUME(T.RParen);
            return this.ACTION(() => {
              this.leave();
              return { kind: 'list', items, span: tokenSpan(open, close) } as const;
            });
          },
        },
        { ALT: () => this.SUBRULE(this.primaryExpr) },
      ],
    }),
  );

  // ── primary expressions ───────────────────────────────────────────────────

  /**
   * ABNF `primitiveLiteral`, `parenExpr`, `arrayOrObject`, `methodCallExpr`, `memberExpr`,
   * `parameterAlias`, `rootExpr`. One token of lookahead and no gates, so Chevrotain picks the
   * alternative by a table lookup (gated alternatives cost a third of the parse time).
   */
  private readonly primaryExpr = this.RULE('primaryExpr', (): Expr =>
    this.OR({
      MAX_LOOKAHEAD: 1,
      IGNORE_AMBIGUITIES: true, // true, false and null are also Names; the literal alternative takes them
      DEF: (this.primaryAlternatives ??= [
        {
          ALT: () => {
            const token = this.CONSUME(T.Literal);
            return this.RECORDING_PHASE
              ? (token as never)
              : { kind: 'literal', literal: this.decodeLiteral(token), span: tokenSpan(token) };
          },
        },
        {
          ALT: () => {
            const open = this.CONSUME(T.LParen);
            this.ACTION(() => this.enter(open));
            const inner = this.SUBRULE(this.binaryExpr, weakest);
            this.CONSUME(T.RParen);
            this.ACTION(() => this.leave());
            return inner;
          },
        },
        { ALT: () => this.SUBRULE(this.arrayExpr) },
        { ALT: () => this.SUBRULE(this.objectExpr) },
        { ALT: () => this.SUBRULE(this.memberExpr) },
      ]),
    }),
  );

  private decodeLiteral(token: IToken): LiteralValue {
    const text = token.image;
    const at = token.startOffset;
    const ctx = this.literalContext();
    switch (token.tokenType) {
      case T.NumberLiteral:
        return decodeNumber(text, at, ctx);
      case T.SpecialDoubleLiteral:
        return decodeSpecialDouble(text);
      case T.StringLiteral:
        return { type: 'Edm.String', value: decodeString(text) };
      case T.DateTimeOffsetLiteral:
        return decodeDateTimeOffset(text, at, ctx);
      case T.DateLiteral:
        return decodeDate(text, at, ctx);
      case T.TimeOfDayLiteral:
        return decodeTimeOfDay(text, at, ctx);
      case T.GuidLiteral:
        return decodeGuid(text);
      case T.DurationLiteral:
        return decodeDuration(text, at, ctx);
      case T.BinaryLiteral:
        return decodeBinary(text, at, ctx);
      case T.GeoLiteral:
        return decodeGeo(text);
      case T.EnumLiteral:
        return decodeEnum(text);
      case T.Null:
        return { type: 'null' };
      default:
        return { type: 'Edm.Boolean', value: text.toLowerCase() === 'true' };
    }
  }

  /** ABNF `arrayOrObject` (array part): `[expr, ...]` with JSON strings allowed as items. */
  private readonly arrayExpr = this.RULE('arrayExpr', (): Expr => {
    const open = this.CONSUME(T.LBracket);
    this.ACTION(() => this.enter(open));
    const items: Expr[] = [];
    this.MANY_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.jsonValue)) });
    const close = this.CONSUME(T.RBracket);
    return this.ACTION(() => {
      this.leave();
      return { kind: 'array', items, span: tokenSpan(open, close) } as const;
    });
  });

  /** ABNF `arrayOrObject` (object part): `{"name": expr, ...}`. */
  private readonly objectExpr = this.RULE('objectExpr', (): Expr => {
    const open = this.CONSUME(T.LBrace);
    this.ACTION(() => this.enter(open));
    const members: { name: string; value: Expr; span: Span }[] = [];
    this.MANY_SEP({
      SEP: T.Comma,
      DEF: () => {
        const name = this.CONSUME(T.JsonString);
        this.CONSUME(T.Colon);
        const value = this.SUBRULE(this.jsonValue);
        this.ACTION(() => {
          members.push({ name: JSON.parse(name.image) as string, value, span: span(name.startOffset, value.span.end) });
        });
      },
    });
    const close = this.CONSUME(T.RBrace);
    return this.ACTION(() => {
      this.leave();
      return { kind: 'object', members, span: tokenSpan(open, close) } as const;
    });
  });

  /** A JSON value inside an array, object or function parameter: a JSON string, or any common expression. */
  private jsonValueAlternatives: IOrAlt<Expr>[] | undefined;

  private readonly jsonValue = this.RULE('jsonValue', (): Expr =>
    this.OR(
      (this.jsonValueAlternatives ??= [
        {
          ALT: () => {
            const token = this.CONSUME(T.JsonString);
            return this.ACTION(() => ({
              kind: 'literal',
              literal: { type: 'Edm.String', value: JSON.parse(token.image) as string },
              span: tokenSpan(token),
            }));
          },
        },
        { ALT: () => this.SUBRULE(this.binaryExpr, weakest) },
      ]),
    ),
  );

  // ── member paths and calls ────────────────────────────────────────────────

  /**
   * The parenthesized part of a call, key predicate or function segment: `(a, b)`, `(k=1,j=2)`,
   * `(c:r, ...)`. One generic rule with no gates; what the arguments may be is checked by the caller.
   */
  private readonly argumentList = this.RULE('argumentList', (): RawArguments => {
    // the callee is passed in a field rather than ARGS, which would allocate on every call
    const callee = this.nextCallee;
    this.nextCallee = undefined;
    const open = this.CONSUME(T.LParen);
    this.ACTION(() => {
      this.enter(open);
      this.callees.push(callee);
    });
    const items: RawArgument[] = [];
    this.MANY_SEP({
      SEP: T.Comma,
      DEF: () => {
        const first = this.SUBRULE(this.jsonValue);
        let assigned: Expr | undefined;
        let branch: Expr | undefined;
        this.OPTION(() => {
          this.CONSUME(T.Equals);
          assigned = this.SUBRULE2(this.jsonValue);
        });
        this.OPTION2(() => {
          this.CONSUME(T.Colon);
          branch = this.SUBRULE(this.commonExpr);
        });
        if (!this.RECORDING_PHASE) items.push({ first, assigned, branch });
      },
    });
    const close = this.CONSUME(T.RParen);
    return this.ACTION(() => {
      this.leave();
      this.callees.pop();
      return { items, span: tokenSpan(open, close) };
    });
  });

  /**
   * ABNF `memberExpr`, `firstMemberExpr`, `rootExpr`, `parameterAlias`, `methodCallExpr`,
   * `castExpr`, `isofExpr`, `functionExpr`: a path with its root, an alias, or a canonical call.
   * A first name followed by `(` that is not a canonical function is a key predicate (`Items(1)`)
   * when it looks like one, and otherwise an unknown function.
   */
  /** The path being built by each `memberExpr` in progress, innermost last (lets its alternatives be cached). */
  private paths: PathBuilder[] = [];
  private memberAlternatives: IOrAlt<void>[] | undefined;
  private pathContinuation: (() => void) | undefined;

  private currentPath(): PathBuilder {
    return this.paths[this.paths.length - 1]!;
  }

  private readonly memberExpr = this.RULE('memberExpr', (): Expr => {
    const first = this.LA(1);
    if (!this.RECORDING_PHASE) this.paths.push({ root: implicitRoot, segments: [], result: undefined });
    // Cached alternatives and loop body: they reach the path through `currentPath()`, not closures.
    this.OR(
      (this.memberAlternatives ??= [
        { ALT: () => this.SUBRULE(this.rootHead) },
        { ALT: () => this.SUBRULE(this.aliasHead) },
        { ALT: () => this.SUBRULE(this.qualifiedHead) },
        { ALT: () => this.SUBRULE(this.nameHead) },
      ]),
    );
    this.MANY(
      (this.pathContinuation ??= () => {
        const slash = this.CONSUME(T.Slash);
        if (!this.RECORDING_PHASE) {
          if (isBlank(this.text[slash.startOffset - 1]) || isBlank(this.text[slash.startOffset + 1])) {
            this.fail('InvalidSyntax', slash.startOffset, "Unexpected space around '/'", 'write a path as A/B');
          }
          const result = this.currentPath().result;
          if (result !== undefined) {
            this.fail('InvalidSyntax', slash.startOffset, `Unexpected '/' after ${describeNode(result)}`);
          }
          this.nextSegments = this.currentPath().segments;
        }
        this.SUBRULE(this.pathSegment);
      }),
    );
    if (this.RECORDING_PHASE) return first as never;
    const { root, segments, result } = this.paths.pop()!;
    return result ?? { kind: 'path', root, segments, span: span(first.startOffset, this.endOfLast()) };
  });

  /** `$it`, `$this`, `$root` (ABNF `implicitVariableExpr`, `rootExpr`). */
  private readonly rootHead = this.RULE('rootHead', (): void => {
    const token = this.CONSUME(T.DollarName);
    if (this.RECORDING_PHASE) return;
    const path = this.currentPath();
    switch (token.image) {
      case '$it':
        path.root = { kind: '$it' };
        break;
      case '$this':
        path.root = { kind: '$this' };
        break;
      case '$root':
        path.root = { kind: '$root' };
        if (this.LA(1).tokenType !== T.Slash) this.fail('InvalidSyntax', tokenEnd(token), "Expected '/' after $root");
        break;
      default:
        this.fail('InvalidSyntax', token.startOffset, `Unexpected '${token.image}'`, 'expected $it, $this or $root');
    }
  });

  /** `@word` alone is a parameter alias; `@Ns.Term`, `@Term#q` or `@x/...` starts an annotation path. */
  private readonly aliasHead = this.RULE('aliasHead', (): void => {
    const token = this.CONSUME(T.AtName);
    if (this.RECORDING_PHASE) return;
    const path = this.currentPath();
    if (this.LA(1).tokenType === T.Slash || /[.#]/.test(token.image)) {
      path.segments.push({ kind: 'annotation', term: token.image.slice(1), span: tokenSpan(token) });
    } else {
      const value = this.aliases?.get(token.image);
      const where = tokenSpan(token);
      path.result =
        value === undefined
          ? { kind: 'alias', name: token.image, span: where }
          : { kind: 'alias', name: token.image, value, span: where };
    }
  });

  /** A qualified name: a canonical `geo.*` call, a bound function, a leading cast, or a type name in cast/isof. */
  private readonly qualifiedHead = this.RULE('qualifiedHead', (): void => {
    const token = this.CONSUME(T.QualifiedName);
    let args: RawArguments | undefined;
    this.OPTION(() => {
      if (!this.RECORDING_PHASE) this.nextCallee = canonicalByLowerName.get(token.image.toLowerCase());
      args = this.SUBRULE(this.argumentList);
    });
    if (this.RECORDING_PHASE) return;
    const path = this.currentPath();
    if (args !== undefined) {
      const canonical = canonicalByLowerName.get(token.image.toLowerCase());
      if (canonical !== undefined) path.result = this.callFrom(canonical, token, args);
      else path.segments.push(this.functionFrom(token, args));
      return;
    }
    const callee = this.callees[this.callees.length - 1];
    if (this.LA(1).tokenType === T.Slash) {
      // a leading type cast: `Model.VipCustomer/Rating`
      path.segments.push({ kind: 'cast', typeName: token.image, span: tokenSpan(token) });
    } else if (callee === 'cast' || callee === 'isof') {
      path.result = { kind: 'typeName', name: token.image, span: tokenSpan(token) };
    } else {
      this.fail(
        'InvalidSyntax',
        tokenEnd(token),
        `Expected '(' after the function name '${token.image}' (a qualified name is a function call)`,
      );
    }
  });

  /** A name: a property, a lambda variable, a canonical call (`contains(`), or a key predicate (`Items(1)`). */
  private readonly nameHead = this.RULE('nameHead', (): void => {
    const token = this.CONSUME(T.Name);
    let canonical: CanonicalFunctionName | undefined;
    if (!this.RECORDING_PHASE) {
      const called = this.LA(1).tokenType === T.LParen;
      // only a called name needs the (allocating) case-insensitive function lookup
      canonical = called ? canonicalByLowerName.get(token.image.toLowerCase()) : undefined;
      if (called && canonical === undefined && !this.looksLikeKeyPredicate()) this.unknownFunction(token);
      if (canonical === undefined) {
        const path = this.currentPath();
        if (this.variables.includes(token.image)) path.root = { kind: 'variable', name: token.image };
        else path.segments.push({ kind: 'property', name: token.image, span: tokenSpan(token) });
      }
    }
    this.OPTION(() => {
      if (!this.RECORDING_PHASE) this.nextCallee = canonical;
      const args = this.SUBRULE(this.argumentList);
      if (this.RECORDING_PHASE) return;
      const path = this.currentPath();
      if (canonical !== undefined) path.result = this.callFrom(canonical, token, args);
      else path.segments.push(this.keyFrom(args));
    });
  });

  /** Checks the arguments of a canonical function and builds the call. */
  private callFrom(name: CanonicalFunctionName, nameToken: IToken, args: RawArguments): Expr {
    if (args.span.start !== tokenEnd(nameToken)) {
      this.fail('InvalidSyntax', tokenEnd(nameToken), `Unexpected space between '${nameToken.image}' and '('`);
    }
    const last = args.items.length - 1;
    const built = args.items.map((arg, index): Expr => {
      if (arg.assigned !== undefined) {
        this.fail('InvalidSyntax', arg.first.span.end, "Unexpected '='", `${name}() takes positional arguments`);
      }
      if (name === 'case') {
        if (arg.branch === undefined) {
          this.fail('InvalidSyntax', arg.first.span.end, "Expected ':' in case(condition:result, ...)");
        }
        return {
          kind: 'caseBranch',
          condition: arg.first,
          result: arg.branch,
          span: span(arg.first.span.start, arg.branch.span.end),
        };
      }
      if (arg.branch !== undefined) this.fail('InvalidSyntax', arg.first.span.end, `Unexpected ':' in ${name}()`);
      if ((name === 'cast' || name === 'isof') && index === last)
        return typeNameOf(arg.first) ?? this.expectedType(name, arg.first);
      if (arg.first.kind === 'typeName') {
        this.fail('InvalidSyntax', arg.first.span.end, `Expected '(' after the function name '${arg.first.name}'`);
      }
      return arg.first;
    });
    return { kind: 'call', name, args: built, span: span(nameToken.startOffset, args.span.end) };
  }

  private expectedType(name: string, arg: Expr): never {
    this.fail(
      'InvalidSyntax',
      arg.span.start,
      `Expected a type name such as Edm.String as the last argument of ${name}()`,
    );
  }

  /** A key predicate: one positional value, or `name=value` parts. */
  private keyFrom(args: RawArguments): KeySegment {
    if (args.items.length === 0) this.fail('InvalidSyntax', args.span.end - 1, 'Expected a key value');
    const values = args.items.map((arg) => {
      if (arg.branch !== undefined) this.fail('InvalidSyntax', arg.first.span.end, "Unexpected ':' in a key predicate");
      if (arg.assigned === undefined) return { value: arg.first };
      return { name: this.parameterName(arg.first), value: arg.assigned };
    });
    if (values.length > 1 && values.some((v) => v.name === undefined)) {
      this.fail('InvalidSyntax', args.span.start, 'A key predicate with several values names each part: (A=1,B=2)');
    }
    return { kind: 'key', values, span: args.span };
  }

  /** A bound function segment: `Ns.Fn()`, `Ns.Fn(p=1,q=@a)`. */
  private functionFrom(nameToken: IToken, args: RawArguments): FunctionSegment {
    const parameters = args.items.map((arg): FunctionParameter => {
      if (arg.assigned === undefined) {
        this.fail(
          'InvalidSyntax',
          arg.first.span.end,
          `Expected '=' after the parameter name in ${nameToken.image}(name=value)`,
        );
      }
      return {
        name: this.parameterName(arg.first),
        value: arg.assigned,
        span: span(arg.first.span.start, arg.assigned.span.end),
      };
    });
    return { kind: 'function', name: nameToken.image, parameters, span: span(nameToken.startOffset, args.span.end) };
  }

  /** The name left of `=` must be a plain name. */
  private parameterName(expr: Expr): string {
    const name = simpleName(expr);
    if (name === undefined) this.fail('InvalidSyntax', expr.span.start, "Expected a parameter name before '='");
    return name;
  }

  private unknownFunction(token: IToken): never {
    const lower = token.image.toLowerCase();
    if (lower === 'any' || lower === 'all') {
      // `any` alone is a valid property path; the input goes wrong at the '(' (as the ABNF test cases count)
      this.fail(
        'InvalidSyntax',
        tokenEnd(token),
        `'${token.image}(...)' needs a collection before it, as in Items/${lower}(i: i/Quantity gt 1)`,
      );
    }
    const guess = suggest(token.image, canonicalFunctions);
    this.fail(
      'UnknownFunction',
      token.startOffset,
      `Unknown function '${token.image}'`,
      guess === undefined ? undefined : `did you mean '${guess}'?`,
    );
  }

  /** After `name(`: a single literal or alias then `)`, or `name=`: a key predicate rather than a call. */
  private looksLikeKeyPredicate(): boolean {
    const inside = this.LA(2);
    const next = this.LA(3);
    if (tokenMatcher(inside, T.Name) && next.tokenType === T.Equals) return true;
    const literalLike = inside.tokenType === T.AtName || tokenMatcher(inside, T.Literal);
    return literalLike && next.tokenType === T.RParen;
  }

  /** One segment after `/` in ABNF `memberExpr`: property, cast, function, `$count`, `$filter(...)`, lambda, annotation. */
  private readonly pathSegment = this.RULE('pathSegment', (): void => {
    const segments = this.nextSegments;
    this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          // ABNF anyExpr / allExpr; the gate is only evaluated after a '/'
          GATE: () => this.LA(2).tokenType === T.LParen && /^(any|all)$/i.test(this.LA(1).image),
          ALT: () => {
            const lambda = this.SUBRULE(this.lambdaExpr);
            this.ACTION(() => segments.push(lambda));
          },
        },
        {
          ALT: () => {
            const name = this.CONSUME(T.Name);
            this.ACTION(() => segments.push({ kind: 'property', name: name.image, span: tokenSpan(name) }));
            this.OPTION(() => {
              const args = this.SUBRULE(this.argumentList);
              this.ACTION(() => {
                // `Fn()` is a bound function without parameters; anything else is a key predicate
                if (args.items.length === 0) segments[segments.length - 1] = this.functionFrom(name, args);
                else segments.push(this.keyFrom(args));
              });
            });
          },
        },
        {
          ALT: () => {
            const name = this.CONSUME(T.QualifiedName);
            let args: RawArguments | undefined;
            this.OPTION2(() => {
              args = this.SUBRULE2(this.argumentList);
            });
            this.ACTION(() =>
              segments.push(
                args === undefined
                  ? { kind: 'cast', typeName: name.image, span: tokenSpan(name) }
                  : this.functionFrom(name, args),
              ),
            );
          },
        },
        {
          ALT: () => {
            const token = this.CONSUME(T.DollarName);
            this.OR2([
              {
                GATE: () => token.image === '$count',
                ALT: () => {
                  let filter: Expr | undefined;
                  this.OPTION3(() => {
                    const open = this.CONSUME(T.LParen);
                    const option = this.CONSUME2(T.DollarName);
                    this.ACTION(() => {
                      if (option.image.toLowerCase() !== '$filter') {
                        this.fail(
                          'InvalidSyntax',
                          option.startOffset,
                          `Only $filter is supported inside $count(...), not ${option.image}`,
                        );
                      }
                      this.enter(open);
                    });
                    this.CONSUME(T.Equals);
                    filter = this.SUBRULE(this.commonExpr);
                    this.CONSUME(T.RParen);
                    this.ACTION(() => this.leave());
                  });
                  this.ACTION(() => {
                    const where = span(token.startOffset, this.endOfLast());
                    segments.push(
                      filter === undefined ? { kind: 'count', span: where } : { kind: 'count', filter, span: where },
                    );
                  });
                },
              },
              {
                GATE: () => token.image === '$filter',
                ALT: () => {
                  const open = this.CONSUME2(T.LParen);
                  this.ACTION(() => this.enter(open));
                  const predicate = this.SUBRULE2(this.commonExpr);
                  const close = this.CONSUME2(T.RParen);
                  this.ACTION(() => {
                    this.leave();
                    segments.push({ kind: 'filter', predicate, span: tokenSpan(token, close) });
                  });
                  this.OPTION4(() => {
                    const args = this.SUBRULE3(this.argumentList);
                    this.ACTION(() => segments.push(this.keyFrom(args)));
                  });
                },
              },
              {
                ALT: () =>
                  this.ACTION(() =>
                    this.fail(
                      'InvalidSyntax',
                      token.startOffset,
                      `Unexpected '${token.image}' in a path`,
                      'expected $count or $filter',
                    ),
                  ),
              },
            ]);
          },
        },
        {
          ALT: () => {
            const token = this.CONSUME(T.AtName);
            this.ACTION(() =>
              segments.push({ kind: 'annotation', term: token.image.slice(1), span: tokenSpan(token) }),
            );
          },
        },
      ],
    });
  });

  /** ABNF `anyExpr` / `allExpr`: `any()`, `any(v: predicate)`, `all(v: predicate)`. */
  private readonly lambdaExpr = this.RULE('lambdaExpr', (): PathSegment => {
    const name = this.CONSUME(T.Name);
    const kind = this.ACTION(() => name.image.toLowerCase() as 'any' | 'all');
    const open = this.CONSUME(T.LParen);
    this.ACTION(() => this.enter(open));
    let variable: string | undefined;
    let predicate: Expr | undefined;
    this.OPTION(() => {
      const v = this.CONSUME2(T.Name);
      this.CONSUME(T.Colon);
      this.ACTION(() => {
        variable = v.image;
        this.variables.push(v.image);
      });
      predicate = this.SUBRULE(this.commonExpr);
      this.ACTION(() => this.variables.pop());
    });
    this.ACTION(() => {
      // `any()` may have no body; `all` must have one (ABNF allExpr)
      if (kind === 'all' && predicate === undefined) {
        this.fail(
          'InvalidSyntax',
          this.LA(1).startOffset,
          'all(...) needs a lambda expression, as in all(x: x/Quantity gt 0)',
        );
      }
    });
    const close = this.CONSUME(T.RParen);
    return this.ACTION(() => {
      this.leave();
      const where = tokenSpan(name, close);
      if (variable === undefined || predicate === undefined) return { kind, span: where };
      return { kind, variable, predicate, span: where };
    });
  });

  // ── $orderby ──────────────────────────────────────────────────────────────

  /** ABNF `orderby`: `orderbyItem *( COMMA orderbyItem )`. */
  readonly orderby = this.RULE('orderby', (): OrderByItem[] => {
    const items: OrderByItem[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.orderbyItem)) });
    return items;
  });

  /** ABNF `orderbyItem`: `commonExpr [ RWS ( "asc" / "desc" ) ]`. */
  private readonly orderbyItem = this.RULE('orderbyItem', (): OrderByItem => {
    const expr = this.SUBRULE(this.commonExpr);
    let direction: 'asc' | 'desc' = 'asc';
    this.OPTION(() => {
      const token = this.OR([{ ALT: () => this.CONSUME(T.Asc) }, { ALT: () => this.CONSUME(T.Desc) }]);
      this.ACTION(() => {
        if (!isBlank(this.text[token.startOffset - 1])) {
          this.fail('InvalidSyntax', token.startOffset, `Expected a space before '${token.image}'`);
        }
        direction = token.image.toLowerCase() as 'asc' | 'desc';
      });
    });
    return this.ACTION(() => ({ expr, direction, span: span(expr.span.start, this.endOfLast()) }));
  });

  // ── $apply, $compute ──────────────────────────────────────────────────────

  /** Data Aggregation ABNF `applyExpr`: transformations separated by `/`. */
  readonly apply = this.RULE('apply', (): ApplyTransformation[] => {
    const steps: ApplyTransformation[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Slash, DEF: () => steps.push(this.SUBRULE(this.transformation)) });
    return steps;
  });

  /** `$compute` (4.01) and the items of `compute(...)`: `expr as Alias`, comma-separated. */
  readonly compute = this.RULE('compute', (): ComputeItem[] => {
    const items: ComputeItem[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.computeItem)) });
    return items;
  });

  private readonly computeItem = this.RULE('computeItem', (): ComputeItem => {
    const expr = this.SUBRULE(this.commonExpr);
    const alias = this.SUBRULE(this.asAlias);
    return this.ACTION(() => ({
      expr,
      alias: alias.name,
      aliasSpan: alias.span,
      span: span(expr.span.start, alias.span.end),
    }));
  });

  /** ABNF `asAlias`: `RWS "as" RWS odataIdentifier`. */
  private readonly asAlias = this.RULE('asAlias', (): { name: string; span: Span } => {
    const as = this.CONSUME(T.Name);
    this.ACTION(() => {
      if (as.image !== 'as') {
        this.fail('InvalidSyntax', as.startOffset, `Unexpected '${as.image}'`, "expected 'as' and an alias");
      }
      if (!isBlank(this.text[as.startOffset - 1]))
        this.fail('InvalidSyntax', as.startOffset, "Expected a space before 'as'");
    });
    const alias = this.CONSUME2(T.Name);
    return this.ACTION(() => {
      if (!isBlank(this.text[alias.startOffset - 1])) {
        this.fail('InvalidSyntax', alias.startOffset, "Expected a space after 'as'");
      }
      return { name: alias.image, span: tokenSpan(alias) };
    });
  });

  /** One item of `aggregate(...)`: `expr with method as Alias`, or `$count as Alias`. */
  private readonly aggregateItem = this.RULE('aggregateItem', (): AggregateItem =>
    this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          GATE: () => this.LA(1).image === '$count',
          ALT: () => {
            const count = this.CONSUME(T.DollarName);
            const alias = this.SUBRULE(this.asAlias);
            return this.ACTION((): AggregateItem => ({
              kind: 'count',
              alias: alias.name,
              aliasSpan: alias.span,
              span: span(count.startOffset, alias.span.end),
            }));
          },
        },
        {
          ALT: () => {
            const expr = this.SUBRULE(this.commonExpr);
            let withToken: IToken | undefined;
            let method: IToken | undefined;
            let alias: { name: string; span: Span } | undefined;
            this.OPTION(() => {
              withToken = this.CONSUME(T.Name);
              method = this.OR2([{ ALT: () => this.CONSUME2(T.Name) }, { ALT: () => this.CONSUME(T.QualifiedName) }]);
              // (optional here, so that a custom aggregate's `Name as Alias` reads: `as` in withToken, the alias in
              // method; the ACTION below requires it after a method)
              this.OPTION2(() => {
                alias = this.SUBRULE2(this.asAlias);
              });
            });
            return this.ACTION((): AggregateItem => {
              // `Name` alone, or `Name as Alias`: a custom aggregate (the binder looks it up)
              const custom =
                expr.kind === 'path' &&
                expr.root.kind === 'implicit' &&
                expr.segments.length === 1 &&
                expr.segments[0]!.kind === 'property';
              if (custom && (withToken === undefined || withToken.image === 'as')) {
                const name = (expr.segments[0] as Extract<PathSegment, { kind: 'property' }>).name;
                if (withToken === undefined) {
                  return {
                    kind: 'custom',
                    name,
                    nameSpan: expr.span,
                    alias: name,
                    aliasSpan: expr.span,
                    span: expr.span,
                  };
                }
                // (read as `Name as` then a method and an alias: `as` must be followed by the alias alone)
                if (alias !== undefined || method === undefined || method.tokenType === T.QualifiedName) {
                  return this.fail(
                    'InvalidSyntax',
                    withToken.startOffset,
                    `Unexpected 'as' here`,
                    'write Name as Alias',
                  );
                }
                const aliasSpan = tokenSpan(method);
                return {
                  kind: 'custom',
                  name,
                  nameSpan: expr.span,
                  alias: method.image,
                  aliasSpan,
                  span: span(expr.span.start, aliasSpan.end),
                };
              }
              if (withToken === undefined || method === undefined) {
                return this.fail(
                  'InvalidSyntax',
                  this.endOfLast(),
                  'Expected an aggregation method after the aggregated expression',
                  `write the method and an alias: ${this.text.slice(expr.span.start, expr.span.end)} with sum as Total`,
                );
              }
              if (alias === undefined) {
                return this.fail(
                  'InvalidSyntax',
                  this.endOfLast(),
                  'Expected an alias after the aggregation method',
                  `write ${this.text.slice(expr.span.start, method.startOffset + method.image.length)} as Alias`,
                );
              }
              if (withToken.image !== 'with') {
                this.fail(
                  'InvalidSyntax',
                  withToken.startOffset,
                  `Unexpected '${withToken.image}'`,
                  "expected 'with' and an aggregation method",
                );
              }
              if (!isBlank(this.text[withToken.startOffset - 1])) {
                this.fail('InvalidSyntax', withToken.startOffset, "Expected a space before 'with'");
              }
              if (!isBlank(this.text[method.startOffset - 1])) {
                this.fail('InvalidSyntax', method.startOffset, "Expected a space after 'with'");
              }
              const written = method.image.toLowerCase();
              const name = aggregationMethods.find((m) => m === written);
              if (name === undefined) {
                this.fail(
                  method.tokenType === T.QualifiedName ? 'NotImplemented' : 'InvalidSyntax',
                  method.startOffset,
                  method.tokenType === T.QualifiedName
                    ? `The custom aggregation method ${method.image} is not supported by this service`
                    : `Unknown aggregation method '${method.image}'`,
                  `expected ${aggregationMethods.join(', ')}`,
                );
              }
              return {
                kind: 'method',
                expr,
                method: name,
                methodSpan: tokenSpan(method),
                alias: alias.name,
                aliasSpan: alias.span,
                span: span(expr.span.start, alias.span.end),
              };
            });
          },
        },
      ],
    }),
  );

  /** A grouping property of `groupby((...))`: a path of property names. */
  private readonly groupingPath = this.RULE('groupingPath', (): PathExpr => {
    this.ACTION(() => {
      const next = this.LA(1);
      if (next.image === 'rollup' && this.LA(2).tokenType === T.LParen) {
        this.fail('NotImplemented', next.startOffset, 'rollup in groupby is not supported by this service');
      }
    });
    const expr = this.SUBRULE(this.commonExpr);
    return this.ACTION(() => {
      if (expr.kind !== 'path' || expr.root.kind !== 'implicit' || expr.segments.some((s) => s.kind !== 'property')) {
        this.fail(
          'InvalidSyntax',
          expr.span.start,
          `Expected a property to group by, found ${this.text.slice(expr.span.start, expr.span.end)}`,
          'groupby takes property paths in parentheses: groupby((Status,VendorID))',
        );
      }
      return expr;
    });
  });

  /** One transformation of `$apply`: its name, then its parameters in parentheses (none for `identity`). */
  private readonly transformation = this.RULE('transformation', (): ApplyTransformation => {
    const nameToken = this.OR([{ ALT: () => this.CONSUME(T.Name) }, { ALT: () => this.CONSUME(T.QualifiedName) }]);
    const name = this.ACTION((): string => {
      if (nameToken.tokenType === T.QualifiedName) {
        this.fail(
          'NotImplemented',
          nameToken.startOffset,
          `The custom transformation ${nameToken.image} is not supported by this service`,
        );
      }
      const lower = nameToken.image;
      if (unsupportedTransformations.includes(lower)) {
        this.fail(
          'NotImplemented',
          nameToken.startOffset,
          `The transformation ${lower} is not supported by this service`,
        );
      }
      if (!applyTransformations.includes(lower)) {
        const guess = suggest(lower, applyTransformations);
        this.fail(
          'InvalidSyntax',
          nameToken.startOffset,
          `Unknown transformation '${nameToken.image}'`,
          guess === undefined ? `expected one of ${applyTransformations.join(', ')}` : `did you mean '${guess}'?`,
        );
      }
      currentTransformation = lower;
      return lower;
    });
    let body: Omit<ApplyTransformation, 'span'> | undefined;
    let end = 0;
    this.OPTION(() => {
      const open = this.CONSUME(T.LParen);
      this.ACTION(() => {
        if (name === 'identity') this.fail('InvalidSyntax', open.startOffset, 'identity takes no parameters');
        this.enter(open);
      });
      body = this.OR2({
        IGNORE_AMBIGUITIES: true,
        DEF: [
          {
            GATE: () => name === 'aggregate',
            ALT: () => {
              const items: AggregateItem[] = [];
              this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.aggregateItem)) });
              return { kind: 'aggregate' as const, items };
            },
          },
          {
            GATE: () => name === 'groupby',
            ALT: () => {
              this.CONSUME2(T.LParen);
              const properties: PathExpr[] = [];
              this.AT_LEAST_ONE_SEP2({ SEP: T.Comma, DEF: () => properties.push(this.SUBRULE(this.groupingPath)) });
              this.CONSUME2(T.RParen);
              let apply: ApplyTransformation[] | undefined;
              this.OPTION2(() => {
                this.CONSUME(T.Comma);
                apply = this.SUBRULE(this.apply);
              });
              return { kind: 'groupby' as const, properties, ...(apply === undefined ? {} : { apply }) };
            },
          },
          {
            GATE: () => name === 'filter',
            ALT: () => ({ kind: 'filter' as const, predicate: this.SUBRULE(this.commonExpr) }),
          },
          {
            GATE: () => name === 'compute',
            ALT: () => ({ kind: 'compute' as const, items: this.SUBRULE(this.compute) }),
          },
          {
            GATE: () => name === 'orderby',
            ALT: () => ({ kind: 'orderby' as const, items: this.SUBRULE(this.orderby) }),
          },
          {
            GATE: () => name === 'top' || name === 'skip',
            ALT: () => {
              const value = this.SUBRULE(this.primaryExpr);
              return this.ACTION(() => {
                const literal = value.kind === 'literal' ? value.literal : undefined;
                if (literal?.type !== 'Edm.Int32' || literal.value < 0) {
                  this.fail('InvalidSyntax', value.span.start, `${name} takes a non-negative integer`);
                }
                return { kind: name as 'top' | 'skip', count: literal.value };
              });
            },
          },
          {
            GATE: () => /^(top|bottom)(count|percent|sum)$/.test(name),
            ALT: () => {
              const n = this.SUBRULE2(this.commonExpr);
              this.CONSUME3(T.Comma);
              const value = this.SUBRULE3(this.commonExpr);
              return { kind: name as 'topcount', n, value };
            },
          },
          {
            GATE: () => name === 'concat',
            ALT: () => {
              const sequences: ApplyTransformation[][] = [this.SUBRULE2(this.apply)];
              this.AT_LEAST_ONE(() => {
                this.CONSUME4(T.Comma);
                sequences.push(this.SUBRULE3(this.apply));
              });
              return { kind: 'concat' as const, sequences };
            },
          },
          {
            // (its argument was read before the lexer, and blanked: nothing is left between the parentheses)
            GATE: () => name === 'search',
            ALT: () => this.ACTION(() => ({ kind: 'search' as const, search: this.searchArgument(open) })),
          },
        ],
      });
      const close = this.CONSUME(T.RParen);
      this.ACTION(() => {
        this.leave();
        end = tokenEnd(close);
      });
    });
    return this.ACTION((): ApplyTransformation => {
      if (body === undefined) {
        end = tokenEnd(nameToken);
        if (name !== 'identity') {
          this.fail('InvalidSyntax', end, `Expected '(' after ${name}`, `${name} takes its parameters in parentheses`);
        }
        return { kind: 'identity', span: tokenSpan(nameToken) };
      }
      return { ...body, span: span(nameToken.startOffset, end) } as ApplyTransformation;
    });
  });

  /** The search expression of the `search(` whose parenthesis is `open` (read by blankSearchArguments). */
  private searchArgument(open: IToken): SearchExpr {
    const found = this.searches.get(open.startOffset);
    if (found === undefined) {
      this.fail(
        'InvalidSyntax',
        tokenEnd(open),
        'Expected a search expression',
        'search takes words and "phrases", as in search(pump OR "heat exchanger")',
      );
    }
    if ('error' in found) throw found.error;
    return found.expr;
  }

  // ── $select ───────────────────────────────────────────────────────────────

  /** ABNF `select`: `selectItem *( COMMA selectItem )`. */
  readonly select = this.RULE('select', (): SelectItem[] => {
    const items: SelectItem[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.selectItem)) });
    return items;
  });

  /** ABNF `selectItem`: `*`, `Namespace.*`, or a path of properties, casts, operations, annotations. */
  private readonly selectItem = this.RULE('selectItem', (): SelectItem =>
    this.OR({
      IGNORE_AMBIGUITIES: true,
      DEF: [
        {
          ALT: () => {
            const star = this.CONSUME(T.Star);
            return this.ACTION(() => ({ kind: 'star', span: tokenSpan(star) }) as const);
          },
        },
        {
          GATE: () => this.LA(1).image.endsWith('.*'),
          ALT: () => {
            const token = this.CONSUME(T.QualifiedName);
            return this.ACTION(
              () => ({ kind: 'allOperations', namespace: token.image.slice(0, -2), span: tokenSpan(token) }) as const,
            );
          },
        },
        {
          ALT: () => {
            const start = this.LA(1).startOffset;
            const segments: SelectSegment[] = [];
            let options: NestedSelectOptions | undefined;
            this.AT_LEAST_ONE_SEP({
              SEP: T.Slash,
              DEF: () => {
                const segment = this.SUBRULE(this.selectSegment);
                this.ACTION(() => segments.push(segment));
              },
            });
            this.OPTION(() => {
              options = this.SUBRULE(this.nestedOptions, { ARGS: ['select'] });
            });
            return this.ACTION((): SelectItem => {
              const where = span(start, this.endOfLast());
              return options === undefined
                ? { kind: 'path', segments, span: where }
                : { kind: 'path', segments, options, span: where };
            });
          },
        },
      ],
    }),
  );

  /** ABNF `selectProperty` / `selectPath` segment, `qualifiedActionName`, `qualifiedFunctionName "(" parameterNames ")"`. */
  private readonly selectSegment = this.RULE('selectSegment', (): SelectSegment => {
    const token = this.OR([
      { ALT: () => this.CONSUME(T.Name) },
      { ALT: () => this.CONSUME(T.QualifiedName) },
      { ALT: () => this.CONSUME(T.AtName) },
    ]);
    let parameterNames: string[] | undefined;
    this.OPTION({
      // `Fn(Location,Kind)`: a function signature, not nested options
      GATE: () =>
        this.LA(1).tokenType === T.LParen && this.LA(2).tokenType !== T.DollarName && this.LA(3).tokenType !== T.Equals,
      DEF: () => {
        this.CONSUME(T.LParen);
        parameterNames = [];
        this.MANY_SEP({
          SEP: T.Comma,
          DEF: () => {
            const p = this.CONSUME2(T.Name);
            this.ACTION(() => parameterNames!.push(p.image));
          },
        });
        this.CONSUME(T.RParen);
      },
    });
    return this.ACTION((): SelectSegment => {
      const where = span(token.startOffset, this.endOfLast());
      const canonical = token.tokenType === T.AtName ? undefined : canonicalByLowerName.get(token.image.toLowerCase());
      if (parameterNames !== undefined && canonical !== undefined) {
        // `$select` items are properties, operations and annotations, never expressions (ABNF selectItem): a
        // canonical function there is a malformed request, not an operation this service happens to lack
        this.fail(
          'InvalidSyntax',
          token.startOffset,
          `${canonical}(...) is a canonical function, and $select takes property names, not expressions`,
          parameterNames.length === 1 ? `select the property itself: $select=${parameterNames[0]!}` : undefined,
        );
      }
      if (token.tokenType === T.AtName) return { kind: 'annotation', term: token.image.slice(1), span: where };
      if (parameterNames !== undefined) return { kind: 'operation', name: token.image, parameterNames, span: where };
      if (token.tokenType === T.QualifiedName) return { kind: 'cast', typeName: token.image, span: where };
      return { kind: 'property', name: token.image, span: where };
    });
  });

  // ── $expand ───────────────────────────────────────────────────────────────

  /** ABNF `expand`: `expandItem *( COMMA expandItem )`. */
  readonly expand = this.RULE('expand', (): ExpandItem[] => {
    const items: ExpandItem[] = [];
    this.AT_LEAST_ONE_SEP({ SEP: T.Comma, DEF: () => items.push(this.SUBRULE(this.expandItem)) });
    return items;
  });

  /**
   * ABNF `expandItem`: `*` with `/$ref` or `($levels=...)`, or a path of navigation names and casts, then `/$ref` or
   * `/$count`, then options in parentheses (which options an item takes depends on its suffix).
   */
  private readonly expandItem = this.RULE('expandItem', (): ExpandItem =>
    this.OR([
      {
        ALT: () => {
          const star = this.CONSUME(T.Star);
          let suffix: IToken | undefined;
          let options: NestedExpandOptions | undefined;
          this.OPTION(() => {
            this.CONSUME(T.Slash);
            suffix = this.CONSUME(T.DollarName);
          });
          this.OPTION2(() => {
            options = this.SUBRULE(this.nestedOptions, { ARGS: ['expand'] });
          });
          return this.ACTION((): ExpandItem => {
            if (suffix !== undefined && suffix.image !== '$ref') {
              this.fail(
                'InvalidSyntax',
                suffix.startOffset,
                `Unexpected '${suffix.image}' after '*'`,
                "expected '*/$ref'",
              );
            }
            const where = span(star.startOffset, this.endOfLast());
            const given = options === undefined ? [] : Object.keys(options);
            if (given.some((name) => name !== 'levels') || (suffix !== undefined && given.length > 0)) {
              this.fail(
                'InvalidSyntax',
                star.startOffset,
                `'*' takes no options${suffix === undefined ? ' but $levels' : ''}`,
                'expand a navigation by name to give it options',
              );
            }
            return options?.levels === undefined
              ? { kind: 'star', ref: suffix !== undefined, span: where }
              : { kind: 'star', ref: false, levels: options.levels, span: where };
          });
        },
      },
      {
        // `$value`: the media stream of a media entity
        GATE: () => this.LA(1).image === '$value',
        ALT: () => {
          const token = this.CONSUME3(T.DollarName);
          return this.ACTION((): ExpandItem => ({ kind: 'value', span: tokenSpan(token) }));
        },
      },
      {
        ALT: () => {
          const start = this.LA(1).startOffset;
          const segments: ExpandSegment[] = [];
          let suffix: IToken | undefined;
          let options: NestedExpandOptions | undefined;
          let star = false;
          const first = this.SUBRULE(this.expandSegment);
          this.ACTION(() => segments.push(first));
          this.MANY({
            GATE: () => this.LA(2).tokenType !== T.DollarName && this.LA(2).tokenType !== T.Star,
            DEF: () => {
              this.CONSUME2(T.Slash);
              const next = this.SUBRULE2(this.expandSegment);
              this.ACTION(() => segments.push(next));
            },
          });
          // `Address/*`: every navigation of a complex property
          this.OPTION5({
            GATE: () => this.LA(2).tokenType === T.Star,
            DEF: () => {
              this.CONSUME4(T.Slash);
              this.CONSUME2(T.Star);
              star = true;
            },
          });
          this.OPTION3(() => {
            this.CONSUME3(T.Slash);
            suffix = this.CONSUME2(T.DollarName);
          });
          this.OPTION4(() => {
            options = this.SUBRULE2(this.nestedOptions, { ARGS: ['expand'] });
          });
          return this.ACTION((): ExpandItem => {
            const where = span(start, this.endOfLast());
            let kind: '$ref' | '$count' | undefined;
            if (suffix !== undefined) {
              if (suffix.image !== '$ref' && suffix.image !== '$count') {
                this.fail(
                  'InvalidSyntax',
                  suffix.startOffset,
                  `Unexpected '${suffix.image}'`,
                  "expected '/$ref' or '/$count'",
                );
              }
              kind = suffix.image;
              // ABNF expandRefOption and expandCountOption: what references and counts can be asked with
              const allowed = kind === '$ref' ? ['filter', 'orderBy', 'top', 'skip', 'count'] : ['filter'];
              for (const name of Object.keys(options ?? {})) {
                if (!allowed.includes(name)) {
                  this.fail(
                    'InvalidSyntax',
                    this.optionPositions.get(options!)?.get(name) ?? suffix.startOffset,
                    `${optionText(name)} cannot be given with ${kind}`,
                    `with ${kind} only ${allowed.map(optionText).join(', ')}`,
                  );
                }
              }
            }
            return {
              kind: 'path',
              segments,
              ...(star ? { star: true as const } : {}),
              ...(kind === undefined ? {} : { suffix: kind }),
              ...(options === undefined ? {} : { options }),
              span: where,
            };
          });
        },
      },
    ]),
  );

  /**
   * A segment of an expand path: a navigation (or, on the way, a complex property) name, a type cast, or an
   * annotation term (`@Namespace.Term`).
   */
  private readonly expandSegment = this.RULE('expandSegment', (): ExpandSegment => {
    const token = this.OR([
      { ALT: () => this.CONSUME(T.Name) },
      { ALT: () => this.CONSUME(T.QualifiedName) },
      { ALT: () => this.CONSUME(T.AtName) },
    ]);
    return this.ACTION((): ExpandSegment =>
      token.tokenType === T.QualifiedName
        ? { kind: 'cast', typeName: token.image, span: tokenSpan(token) }
        : token.tokenType === T.AtName
          ? { kind: 'annotation', term: token.image.slice(1), span: tokenSpan(token) }
          : { kind: 'property', name: token.image, span: tokenSpan(token) },
    );
  });

  /**
   * ABNF `selectOptionPC` list of a `$select` item, `($select=...;$filter=...;$top=5)`, or the `expandOption` list of
   * an `$expand` item, which adds `$expand` and `$levels`. An option given twice is an error.
   */
  private readonly nestedOptions = this.RULE('nestedOptions', (context: 'select' | 'expand'): NestedExpandOptions => {
    const open = this.CONSUME(T.LParen);
    this.ACTION(() => this.enter(open));
    const options: { -readonly [K in keyof NestedExpandOptions]: NestedExpandOptions[K] } = {};
    const owner = context === 'expand' ? '$expand' : '$select';
    this.AT_LEAST_ONE_SEP({
      SEP: T.Semicolon,
      DEF: () => {
        const nameToken = this.OR([
          { ALT: () => this.CONSUME(T.DollarName) },
          { ALT: () => this.CONSUME(T.Name) },
          { ALT: () => this.CONSUME(T.AtName) },
        ]);
        const name = this.ACTION(() => {
          if (nameToken.tokenType === T.AtName) return nameToken.image;
          const lower = nameToken.image.replace(/^\$/, '').toLowerCase();
          const key = lower === 'orderby' ? 'orderBy' : lower;
          if (Object.prototype.hasOwnProperty.call(options, key)) {
            this.fail('DuplicateOption', nameToken.startOffset, `The nested option $${lower} is given more than once`);
          }
          let positions = this.optionPositions.get(options);
          if (positions === undefined) this.optionPositions.set(options, (positions = new Map()));
          positions.set(key, nameToken.startOffset);
          return lower;
        });
        this.CONSUME(T.Equals);
        this.OR2([
          {
            GATE: () => name === 'filter',
            ALT: () => {
              options.filter = this.SUBRULE(this.commonExpr);
            },
          },
          {
            GATE: () => name === 'orderby',
            ALT: () => {
              options.orderBy = this.SUBRULE(this.orderby);
            },
          },
          {
            GATE: () => name === 'select',
            ALT: () => {
              options.select = this.SUBRULE(this.select);
            },
          },
          {
            GATE: () => name === 'expand' && context === 'expand',
            ALT: () => {
              options.expand = this.SUBRULE(this.expand);
            },
          },
          {
            // any primary, so that a wrong value is reported as such, not as an unknown option
            GATE: () => name === 'top' || name === 'skip',
            ALT: () => {
              const value = this.SUBRULE(this.primaryExpr);
              this.ACTION(() => {
                const literal = value.kind === 'literal' ? value.literal : undefined;
                if (literal?.type !== 'Edm.Int32' || literal.value < 0) {
                  this.fail('InvalidSyntax', value.span.start, `$${name} must be a non-negative integer`);
                }
                options[name as 'top' | 'skip'] = literal.value;
              });
            },
          },
          {
            GATE: () => name === 'levels' && context === 'expand',
            ALT: () => {
              const value = this.SUBRULE3(this.primaryExpr);
              this.ACTION(() => {
                const literal = value.kind === 'literal' ? value.literal : undefined;
                const max =
                  value.kind === 'path' &&
                  value.root.kind === 'implicit' &&
                  value.segments.length === 1 &&
                  value.segments[0]!.kind === 'property' &&
                  value.segments[0]!.name.toLowerCase() === 'max';
                // (ABNF: oneToNine *DIGIT, so no leading zero)
                if (
                  !max &&
                  (literal?.type !== 'Edm.Int32' || literal.value < 1 || this.text[value.span.start] === '0')
                ) {
                  this.fail('InvalidSyntax', value.span.start, '$levels must be a positive integer or max');
                }
                options.levels = max ? 'max' : (literal as { value: number }).value;
              });
            },
          },
          {
            // ABNF aliasAndValue: `@c=15`, a parameter alias of the nested options
            GATE: () => name.startsWith('@') && context === 'expand',
            ALT: () => {
              const value = this.SUBRULE4(this.primaryExpr);
              this.ACTION(() => {
                const aliases = new Map(options.aliases ?? []);
                if (aliases.has(name)) {
                  this.fail(
                    'DuplicateOption',
                    nameToken.startOffset,
                    `Parameter alias ${name} is given more than once`,
                  );
                }
                aliases.set(name, value);
                options.aliases = aliases;
              });
            },
          },
          {
            GATE: () => name === 'count',
            ALT: () => {
              const value = this.SUBRULE2(this.primaryExpr);
              this.ACTION(() => {
                if (value.kind !== 'literal' || value.literal.type !== 'Edm.Boolean') {
                  this.fail('InvalidSyntax', value.span.start, '$count must be true or false');
                }
                options.count = value.literal.value;
              });
            },
          },
          {
            ALT: () =>
              this.ACTION(() => {
                const known =
                  ['filter', 'orderby', 'select', 'top', 'skip', 'count'].includes(name) ||
                  (context === 'expand' && ['expand', 'levels'].includes(name));
                if (known) {
                  // the option's own alternative did not start: its value is missing (`$filter=)` or `$top=;`)
                  const at = this.LA(1);
                  this.fail(
                    'InvalidSyntax',
                    Number.isNaN(at.startOffset) ? this.text.length : at.startOffset,
                    `The nested option $${name} has no value`,
                    `write $${name}=value`,
                  );
                }
                if (context === 'expand' && ['search', 'compute', 'apply'].includes(name)) {
                  this.fail(
                    'NotImplemented',
                    nameToken.startOffset,
                    `The nested option $${name} in $expand is not supported by this service`,
                  );
                }
                this.fail(
                  'InvalidSyntax',
                  nameToken.startOffset,
                  `Unsupported nested option '${nameToken.image}' in ${owner}`,
                  context === 'expand'
                    ? 'an expanded navigation takes $select, $filter, $orderby, $top, $skip, $count, $expand and $levels'
                    : undefined,
                );
              }),
          },
        ]);
      },
    });
    this.CONSUME(T.RParen);
    this.ACTION(() => this.leave());
    return options;
  });
}

type ExpandSegment = Extract<ExpandItem, { kind: 'path' }>['segments'][number];

/** How a nested option is written, from its key in NestedExpandOptions. */
function optionText(key: string): string {
  return `$${key.toLowerCase()}`;
}

/**
 * The transformations of $apply this parser reads (Data Aggregation 4.0 CS03 §3), and every store answers: $metadata
 * lists them (`Aggregation.ApplySupported`).
 */
export const applyTransformations: readonly string[] = [
  'aggregate',
  'groupby',
  'filter',
  'search',
  'compute',
  'orderby',
  'top',
  'skip',
  'topcount',
  'bottomcount',
  'toppercent',
  'bottompercent',
  'topsum',
  'bottomsum',
  'concat',
  'identity',
];
/** Transformations of the extension this service recognises but does not implement (501). */
const unsupportedTransformations: readonly string[] = [
  'expand',
  'nest',
  'join',
  'outerjoin',
  'ancestors',
  'descendants',
  'traverse',
  'addnested',
];

/** What the parameters of a transformation look like, for errors in them. */
const transformationExpectation: Readonly<Record<string, string>> = {
  aggregate: 'an aggregate such as Amount with sum as Total, or $count as Count',
  groupby: 'the grouping properties in parentheses, as in groupby((Status,VendorID),aggregate($count as Count))',
  filter: 'a Boolean expression',
  search: 'words and "phrases" with AND, OR and NOT, and a closing )',
  compute: 'an expression and an alias, as in Quantity mul Price as Total',
  orderby: 'a property or expression to order by',
  top: 'a non-negative integer',
  skip: 'a non-negative integer',
  concat: 'two or more transformation sequences separated by commas',
};
/** The transformation whose parameters are being parsed (for transformationExpectation). */
let currentTransformation = '';

/** The one parser instance, reset for every parse by assigning its input (Chevrotain performance guide). */
const parser = new ODataParser();

type EntryRule = 'commonExpr' | 'orderby' | 'select' | 'expand' | 'apply' | 'compute';

/** Lexes and parses `text` with `rule`; every failure becomes an `ODataError` with the option and position. */
export function parseWith<R extends EntryRule>(
  rule: R,
  text: string,
  target: string,
  options?: ParseOptions,
): ReturnType<ODataParser[R]> {
  if (text.length === 0)
    throw errorAt('InvalidSyntax', `${target} is empty`, target, 0, `expected ${emptyExpectation(rule)}`);
  if (isBlank(text[0])) {
    throw errorAt('InvalidSyntax', 'Unexpected space', target, 0, `the value of ${target} must not start with a space`);
  }
  if (isBlank(text[text.length - 1])) {
    const at = text.search(/[ \t]+$/);
    throw errorAt('InvalidSyntax', 'Unexpected space', target, at, `the value of ${target} must not end with a space`);
  }
  // `$apply`'s search arguments are `$search` syntax, which the OData lexer does not read: read first, then blanked
  const { lexed: blanked, searches } =
    rule === 'apply' ? blankSearchArguments(text, options) : { lexed: text, searches: undefined };
  const lexed = T.odataLexer.tokenize(blanked);
  if (lexed.errors.length > 0) {
    const error = lexed.errors[0]!;
    // (a mistake in a search argument before it comes first)
    for (const found of searches?.values() ?? [])
      if ('error' in found && (found.error.position ?? 0) < error.offset) throw found.error;
    throw new ODataError('InvalidSyntax', lexerMessage(text, error.offset, target), { target, position: error.offset });
  }
  parser.begin(text, lexed.tokens, target, options, searches);
  let result: ReturnType<ODataParser[R]>;
  try {
    result = parser[rule]() as ReturnType<ODataParser[R]>;
  } catch (error) {
    if (error instanceof RangeError) {
      // A deeply nested input that got past the depth limit must still be a clean 400, never a crash.
      throw new ODataError('LimitExceeded', `${target} is nested too deeply to parse`, { target });
    }
    throw error;
  }
  if (parser.errors.length > 0) throw translateError(parser.errors[0]!, text, target, lexed.tokens);
  return result;
}

/** One `search(` argument of `$apply`: its search expression, or its error (thrown when the parser meets it). */
type SearchArgument = { readonly expr: SearchExpr } | { readonly error: ODataError };

/**
 * The search arguments of an `$apply` text, by the position of the `(` before each, and the text for the OData lexer:
 * the same, each argument replaced by as many spaces (so every other position stays). A scan finds them without the
 * parser: it follows what each parenthesis holds (transformations at the top, in `concat(...)` and in a groupby after
 * its grouping properties; expressions elsewhere) and skips string literals, so that `search(` counts only where a
 * transformation stands; each argument ends at its closing parenthesis (searchArgumentEnd).
 */
function blankSearchArguments(
  text: string,
  options: ParseOptions | undefined,
): { lexed: string; searches: ReadonlyMap<number, SearchArgument> } {
  const searches = new Map<number, SearchArgument>();
  if (!text.includes('search')) return { lexed: text, searches };
  // what each open parenthesis holds: transformations, a groupby's parameters (transformations after the first
  // comma), or anything else (expressions, a groupby's properties)
  const held: ('transformations' | 'groupby' | 'other')[] = [];
  const name = /[A-Za-z_][A-Za-z0-9_.]*/y;
  /** The name that starts at `i` where a transformation can stand, if one does. */
  const nameAt = (i: number): string | undefined => {
    if ((held[held.length - 1] ?? 'transformations') === 'other') return undefined;
    name.lastIndex = i;
    return name.exec(text)?.[0];
  };
  let lexed = '';
  let copied = 0;
  for (let i = 0; i < text.length;) {
    const c = text[i]!;
    const inside = held[held.length - 1] ?? 'transformations';
    const word = nameAt(i);
    if (c === "'" || c === '"') {
      const close = closingQuoteOf(text, i);
      if (close === undefined) break; // (unclosed: the lexer says so)
      i = close + 1;
    } else if (c === '(') {
      held.push('other');
      i++;
    } else if (c === ')') {
      held.pop();
      i++;
    } else if (c === ',' && inside === 'groupby') {
      held[held.length - 1] = 'transformations';
      i++;
    } else if (word !== undefined) {
      let open = i + word.length;
      while (text[open] === ' ' || text[open] === '\t') open++;
      if (text[open] !== '(') {
        i += word.length;
        continue;
      }
      if (word !== 'search') {
        held.push(word === 'concat' ? 'transformations' : word === 'groupby' ? 'groupby' : 'other');
        i = open + 1;
        continue;
      }
      const start = open + 1;
      const end = searchArgumentEnd(text, start);
      try {
        searches.set(open, { expr: parseSearchArgument(text, start, end, options) });
      } catch (error) {
        if (!(error instanceof ODataError)) throw error;
        searches.set(open, { error });
      }
      lexed += text.slice(copied, start) + ' '.repeat(end - start);
      copied = end;
      i = end + 1; // (past its closing parenthesis)
    } else i++;
  }
  return { lexed: lexed + text.slice(copied), searches };
}

/** The position of the quote that closes the string literal opening at `start` (`''` or `\"` inside), if any. */
function closingQuoteOf(text: string, start: number): number | undefined {
  const quote = text[start];
  for (let at = start + 1; at < text.length; at++) {
    if (quote === '"' && text[at] === '\\') at++;
    else if (text[at] === quote) {
      if (quote === "'" && text[at + 1] === "'") at++;
      else return at;
    }
  }
  return undefined;
}

function emptyExpectation(rule: EntryRule): string {
  return rule === 'commonExpr'
    ? 'an expression'
    : rule === 'orderby'
      ? 'a property to order by'
      : rule === 'expand'
        ? "a navigation property name or '*'"
        : rule === 'apply'
          ? 'a transformation such as groupby((Status),aggregate($count as Count))'
          : rule === 'compute'
            ? 'an expression and an alias: Price mul Quantity as Total'
            : "a property name or '*'";
}

function describeChar(char: string): string {
  return char === ' ' ? 'space' : char === '\t' ? 'tab' : `'${char}'`;
}

function lexerMessage(text: string, offset: number, target: string): string {
  const char = text[offset] ?? '';
  const code = char.codePointAt(0) ?? 0;
  const shown =
    code < 0x20 || code === 0x7f
      ? `control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`
      : describeChar(String.fromCodePoint(code));
  let hint: string | undefined;
  if (char === '+') hint = "'+' is not a space in an OData URL: write spaces as %20 and a plus sign as %2B";
  else if (char === '%') hint = 'a percent sign must be encoded as %25';
  else if (char === '.') hint = 'a decimal number needs digits on both sides of the point, as in 0.5';
  return atPosition(`Unexpected ${shown}`, offset, target, hint);
}

interface RecognitionError {
  readonly name: string;
  readonly message: string;
  readonly token: IToken;
  readonly previousToken?: IToken;
}

/** Infix operator words, for "did you mean" after a misspelled operator. */
const operatorWords = [...[...T.binaryPrecedence.keys()].map((token) => token.name.toLowerCase()), 'has', 'in'];

function describeToken(token: IToken): string {
  if (token.tokenType === EOF) return 'end of input';
  return `'${token.image.length > 40 ? `${token.image.slice(0, 40)}…` : token.image}'`;
}

/** Turns Chevrotain's recognition exception into an `ODataError` with a message a person can act on. */
/** Tokens that form words: two of them with no space between are one malformed word, not two tokens. */
function isWordLike(token: IToken): boolean {
  return tokenMatcher(token, T.Name) || T.literalTokens.includes(token.tokenType);
}

function translateError(error: RecognitionError, text: string, target: string, tokens: readonly IToken[]): ODataError {
  const token = error.token;
  const index = tokens.indexOf(token);
  const previous = index > 0 ? tokens[index - 1] : undefined;
  if (previous !== undefined && tokenEnd(previous) === token.startOffset && isWordLike(previous) && isWordLike(token)) {
    const word = text.slice(previous.startOffset, tokenEnd(token));
    if (previous.tokenType === T.StringLiteral) {
      // `'O'Neil'`: the string ended early; the input goes wrong where it continues
      const at = token.startOffset;
      return new ODataError(
        'InvalidSyntax',
        atPosition(
          `Unexpected '${token.image}' right after the string ${previous.image}`,
          at,
          target,
          "a quote inside a string is written twice, as in 'O''Neil'",
        ),
        { target, position: at },
      );
    }
    if (token.tokenType === T.StringLiteral && tokenMatcher(previous, T.Name)) {
      // `X'1a2B'`, `datetime'2024-01-01T00:00:00'`: a typed literal with a prefix OData 4 does not have
      const at = previous.startOffset;
      return new ODataError(
        'InvalidSyntax',
        atPosition(
          `'${word}' is not an OData 4 literal`,
          at,
          target,
          'only duration, binary, geography, geometry and enumeration types prefix a quoted value (write a date as 2024-05-01 and a Guid without quotes)',
        ),
        { target, position: at },
      );
    }
    // `0time`, `2.5x`: a literal glued to a name; the input goes wrong where the second word starts
    const at = token.startOffset;
    return new ODataError(
      'InvalidSyntax',
      atPosition(
        `Unexpected '${token.image}' right after '${previous.image}'`,
        at,
        target,
        'separate words with a space (names start with a letter or underscore)',
      ),
      { target, position: at },
    );
  }
  const position = token.tokenType === EOF || Number.isNaN(token.startOffset) ? text.length : token.startOffset;
  const fail = (what: string, hint?: string): ODataError => errorAt('InvalidSyntax', what, target, position, hint);

  switch (token.tokenType) {
    case T.JsonString:
      return fail(
        `String literals use single quotes: write '${safeJsonContent(token.image)}' instead of ${token.image}`,
      );
    case T.UnterminatedString:
      return fail(
        "Unterminated string literal: the opening quote has no closing quote (write a quote inside a string as '')",
      );
    case T.UnterminatedJsonString:
      return fail("Unterminated double-quoted string; OData string literals use single quotes: 'abc'");
    case T.MalformedGuid: {
      const at = token.startOffset + malformedGuidOffset(token.image);
      return new ODataError(
        'InvalidLiteral',
        atPosition(
          `'${token.image}' is not a Guid`,
          at,
          target,
          'expected 8-4-4-4-12 hexadecimal digits, as in 01234567-89ab-cdef-0123-456789abcdef',
        ),
        { target, position: at },
      );
    }
    case T.DateTimeWithoutOffset:
      return fail(
        `DateTimeOffset literal ${token.image} needs a time zone offset such as ${token.image}Z or ${token.image}+02:00`,
      );
    default:
      break;
  }
  let expected = error.message;
  if (error.name === 'NotAllInputParsedException') {
    const guess = tokenMatcher(token, T.Name) ? suggest(token.image, operatorWords) : undefined;
    expected =
      target === '$orderby'
        ? "expected ',', 'asc', 'desc', an operator or the end of $orderby"
        : target === '$select'
          ? "expected ',' or the end of $select"
          : target === '$expand'
            ? "expected ',', '/', '(' or the end of $expand"
            : target === '$apply'
              ? "expected '/' and the next transformation, or the end of $apply"
              : target === '$compute'
                ? "expected ',' or the end of $compute"
                : `expected an operator such as eq, and, or, or the end of ${target}${guess === undefined ? '' : `; did you mean '${guess}'?`}`;
  }
  return fail(`Unexpected ${describeToken(token)}`, expected);
}

/** Index of the first character where `text` stops matching the Guid shape `8-4-4-4-12`. */
function malformedGuidOffset(text: string): number {
  const shape = 'hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh';
  for (let i = 0; i < shape.length; i++) {
    const char = text[i];
    if (char === undefined) return i;
    const ok = shape[i] === '-' ? char === '-' : /[0-9a-fA-F]/.test(char);
    if (!ok) return i;
  }
  return shape.length;
}

function safeJsonContent(image: string): string {
  try {
    return (JSON.parse(image) as string).replace(/'/g, "''");
  } catch {
    return image.slice(1, -1);
  }
}

// ── Public entry points ─────────────────────────────────────────────────────

/** Parses a `$filter` value (already percent-decoded) into a syntax tree. Throws `ODataError` (400). */
export function parseFilter(text: string, options?: ParseOptions): Expr {
  return parseWith('commonExpr', text, '$filter', options);
}

/** Parses a `$orderby` value: one or more expressions, each `asc` (default) or `desc`. */
export function parseOrderBy(text: string, options?: ParseOptions): OrderByItem[] {
  return parseWith('orderby', text, '$orderby', options);
}

/** Parses a `$select` value: `*`, property names and paths, comma-separated. */
export function parseSelect(text: string, options?: ParseOptions): SelectItem[] {
  return parseWith('select', text, '$select', options);
}

/** Parses an `$expand` value: `*`, navigation paths with `/$ref` or `/$count` and nested options, comma-separated. */
export function parseExpand(text: string, options?: ParseOptions): ExpandItem[] {
  return parseWith('expand', text, '$expand', options);
}

/** Parses an `$apply` value: transformations separated by `/` (Data Aggregation 4.0). */
export function parseApply(text: string, options?: ParseOptions): ApplyTransformation[] {
  return parseWith('apply', text, '$apply', options);
}

/** Parses a `$compute` value: `expr as Alias` items, comma-separated (4.01). */
export function parseCompute(text: string, options?: ParseOptions): ComputeItem[] {
  return parseWith('compute', text, '$compute', options);
}

/** The largest `$top` / `$skip` the parser accepts; a service sets its own smaller `$top` limit. */
export const maxPagingValue = Number.MAX_SAFE_INTEGER;

function parseNonNegativeInteger(text: string, option: '$top' | '$skip'): number {
  const code = option === '$top' ? 'InvalidTop' : 'InvalidSkip';
  if (!/^\d+$/.test(text)) {
    const position = text.length === 0 ? 0 : text.search(/\D/);
    const found = text.length === 0 ? 'nothing' : `'${text}'`;
    throw new ODataError(
      code,
      atPosition(`${option} must be a non-negative integer, found ${found}`, position, option),
      { target: option, position },
    );
  }
  const value = Number(text);
  if (value > maxPagingValue) {
    throw new ODataError(code, atPosition(`${option} ${text} is larger than the limit ${maxPagingValue}`, 0, option), {
      target: option,
      position: 0,
    });
  }
  return value;
}

/** Parses `$top`: a non-negative integer (ABNF `1*DIGIT`); `$top=0` is legal. */
export function parseTop(text: string): number {
  return parseNonNegativeInteger(text, '$top');
}

/** Parses `$skip`: a non-negative integer (ABNF `1*DIGIT`). */
export function parseSkip(text: string): number {
  return parseNonNegativeInteger(text, '$skip');
}

/** Parses `$count`: `true` or `false` (case-insensitive, ABNF `boolean`). */
export function parseCount(text: string): boolean {
  const lower = text.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw new ODataError('InvalidCount', atPosition(`$count must be true or false, found '${text}'`, 0, '$count'), {
    target: '$count',
    position: 0,
  });
}
