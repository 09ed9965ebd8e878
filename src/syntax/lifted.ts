// Lifted literals: the literals of a query's shape (src/syntax/shape.ts) that a plan may take as parameters, so that
// one parsed, bound and translated plan serves every value a client puts there.
//
// While a plan is built, each lifted literal's value is readable as usual, but every read of it (`value`, and the
// other members of its kind) is recorded: the binder or a backend that decides anything from a value (a LIKE pattern,
// a regular expression, a scaled decimal bound, an error) has read it, and the plan then holds only for that value:
// the value becomes part of the plan's key (it is pinned). Code that merely passes a value on reads it through
// `liftedSlot` instead, and says how the same step goes for any other written value: `deriveLiteral` for a change
// of type, `testLiteral` for a check, and (in a backend) a parameter computed from the written literal. Reads are
// recorded whatever code makes them, so a path that knows nothing of lifting costs a cache entry, never a wrong
// answer.
import type { LiteralValue } from './ast.js';

/** What building one plan learnt about its lifted literals. */
export class Lifting {
  /** The lifted literals whose values the plan was decided from (by their index). */
  readonly reads = new Set<number>();
  private readonly guards: ((written: readonly LiteralValue[]) => boolean)[] = [];

  /** Whether the plan holds for these written values (those of pinned literals are compared by the caller). */
  holdsFor(written: readonly LiteralValue[]): boolean {
    return this.guards.every((guard) => guard(written));
  }

  /** @internal */
  addGuard(guard: (written: readonly LiteralValue[]) => boolean): void {
    this.guards.push(guard);
  }
}

/** A lifted literal as the plan being built sees it: which literal of the shape it is, and its value so far. */
export interface LiteralSlot {
  /** The literal's place among the shape's lifted literals, in the order they are written. */
  readonly index: number;
  /** The value as the plan uses it (after any change of type), read without pinning it. */
  readonly current: LiteralValue;
  /** The same value for another written literal of the slot; undefined where the steps would not go the same way. */
  derive(written: readonly LiteralValue[]): LiteralValue | undefined;
}

/** Each lifted literal's slot, and the plan it is part of. */
const entries = new WeakMap<object, { readonly slot: LiteralSlot; readonly lifting: Lifting }>();

/** A lifted literal as written: `literal`'s members, each read of which pins it in `lifting`. */
export function liftLiteral(literal: LiteralValue, index: number, lifting: Lifting): LiteralValue {
  return lifted(literal, index, lifting, (written) => written[index]);
}

function lifted(
  literal: LiteralValue,
  index: number,
  lifting: Lifting,
  derive: (written: readonly LiteralValue[]) => LiteralValue | undefined,
): LiteralValue {
  const value: Record<string, unknown> = { type: literal.type };
  for (const [member, memberValue] of Object.entries(literal)) {
    if (member === 'type') continue;
    Object.defineProperty(value, member, {
      enumerable: true,
      get() {
        lifting.reads.add(index);
        return memberValue;
      },
    });
  }
  entries.set(value, { slot: { index, current: literal, derive }, lifting });
  return value as LiteralValue;
}

/** The slot of a lifted literal; undefined for any other value. Reading it pins nothing. */
export function liftedSlot(value: LiteralValue): LiteralSlot | undefined {
  return entries.get(value)?.slot;
}

/** Pins a lifted literal: the plan holds only for its value (what reading any of its members does). */
export function pinLiteral(value: LiteralValue): void {
  const entry = entries.get(value);
  entry?.lifting.reads.add(entry.slot.index);
}

/** The value itself, read without pinning it: for code that only looks and records what it decided (testLiteral). */
function current(value: LiteralValue): LiteralValue {
  return entries.get(value)?.slot.current ?? value;
}

/**
 * `change(value)`, lifted when `value` is: a lifted literal of the same slot whose derivation is `change` after the
 * slot's own. For the binder's changes of type that keep the value (Int32 5 as Decimal 5); undefined as `change` is.
 */
export function deriveLiteral(
  value: LiteralValue,
  change: (value: LiteralValue) => LiteralValue | undefined,
): LiteralValue | undefined {
  const entry = entries.get(value);
  if (entry === undefined) return change(value);
  const { slot, lifting } = entry;
  const changed = change(slot.current);
  if (changed === undefined) return undefined;
  return lifted(changed, slot.index, lifting, (written) => {
    const before = slot.derive(written);
    return before === undefined ? undefined : change(before);
  });
}

/**
 * `test(value)`, without pinning a lifted value: the plan then holds only for written values that test the same.
 * For checks whose outcome decides an error or a form but not the value's use (a Decimal of too many digits).
 */
export function testLiteral(value: LiteralValue, test: (value: LiteralValue) => boolean): boolean {
  const entry = entries.get(value);
  const outcome = test(current(value));
  if (entry !== undefined) {
    const { slot } = entry;
    entry.lifting.addGuard((written) => {
      const derived = slot.derive(written);
      return derived !== undefined && test(derived) === outcome;
    });
  }
  return outcome;
}
