// $orderby: sort keys read through the compiled closures, the row comparator (nulls first ascending, the key
// breaking ties), a full sort that reads each key once per row, and the bounded heap that keeps `$skip + $top` rows.
import type { BoundOrderBy } from '../../validate/bound.js';
import type { Value } from '../../values/read.js';
import type { ClosureCompiler } from './closures.js';
import { comparer, type Comparer } from '../../values/compare.js';
import type { Eval, Row } from './working-values.js';

export interface SortKey {
  readonly read: Eval;
  readonly cmp: Comparer;
  readonly sign: number;
}

/** Compares two key values: nulls first ascending and last descending. */
function compareKey(key: SortKey, x: Value, y: Value): number {
  if (x === null) return y === null ? 0 : -key.sign;
  if (y === null) return key.sign;
  return key.cmp(x, y) * key.sign;
}

/** Each `$orderby` item as a key: its expression compiled, its type's comparer and its direction. */
export function sortKeysOf(items: readonly BoundOrderBy[], compiler: ClosureCompiler): SortKey[] {
  return items.map((item) => {
    const type = item.expr.type === 'null' ? undefined : item.expr.type;
    return {
      read: compiler.compile(item.expr),
      cmp: type === undefined ? () => 0 : comparer(type),
      sign: item.direction === 'desc' ? -1 : 1,
    };
  });
}

/** Orders two rows by the bound `$orderby`. */
export function comparatorOf(keys: readonly SortKey[]): (a: Row, b: Row) => number {
  return (a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const c = compareKey(key, key.read(a), key.read(b));
      if (c !== 0) return c;
    }
    return 0;
  };
}

/**
 * Sorts every row: each key is read once per row into a column and an index array is sorted, so a
 * comparison touches only ready values (n key reads instead of 2·n·log n).
 */
export function sortAll<R extends Row>(rows: readonly R[], keys: readonly SortKey[]): R[] {
  const n = rows.length;
  const columns = keys.map((key) => {
    const column = new Array<Value>(n);
    for (let i = 0; i < n; i++) column[i] = key.read(rows[i]!);
    return column;
  });
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((i, j) => {
    for (let k = 0; k < keys.length; k++) {
      const column = columns[k]!;
      const c = compareKey(keys[k]!, column[i]!, column[j]!);
      if (c !== 0) return c;
    }
    return 0;
  });
  const sorted = new Array<R>(n);
  for (let i = 0; i < n; i++) sorted[i] = rows[order[i]!]!;
  return sorted;
}

/** Keeps the `k` smallest rows by `compare` in a max-heap: O(n log k) instead of sorting everything. */
export class BoundedHeap<R> {
  private readonly heap: R[] = [];
  constructor(
    private readonly k: number,
    private readonly compare: (a: R, b: R) => number,
  ) {}

  offer(row: R): void {
    const heap = this.heap;
    if (heap.length < this.k) {
      heap.push(row);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.compare(heap[i]!, heap[parent]!) <= 0) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (this.k > 0 && this.compare(row, heap[0]!) < 0) {
      heap[0] = row;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let largest = i;
        if (l < heap.length && this.compare(heap[l]!, heap[largest]!) > 0) largest = l;
        if (r < heap.length && this.compare(heap[r]!, heap[largest]!) > 0) largest = r;
        if (largest === i) break;
        [heap[i], heap[largest]] = [heap[largest]!, heap[i]!];
        i = largest;
      }
    }
  }

  sorted(): R[] {
    return this.heap.sort(this.compare);
  }
}
