// Facts about bound nodes that both the generated source and the closures read: the type a comparison or an `in`
// compares in, and the operands of an and/or chain.
import type { EdmPrimitiveType } from '../../values/edm.js';
import type { BoundExpr, BoundIn, BoundLogical, BoundType } from '../../validate/bound.js';

/** The type two operands are compared in; undefined when both are the untyped null literal. */
export function comparedType(type: BoundType, other: BoundType): EdmPrimitiveType | undefined {
  return type === 'null' ? (other === 'null' ? undefined : other) : type;
}

/** The type an `in` compares in; undefined when the operand and every item are the untyped null literal. */
export function membershipType(expr: BoundIn): EdmPrimitiveType | undefined {
  return comparedType(expr.left.type, expr.items.find((i) => i.type !== 'null')?.type ?? 'null');
}

/** A chain of one operator flattened, left to right, without recursion however long the chain. */
export function chainOperands(expr: BoundLogical): BoundExpr[] {
  const operands: BoundExpr[] = [];
  const stack: BoundExpr[] = [expr];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.kind === 'logical' && node.operator === expr.operator) stack.push(node.right, node.left);
    else operands.push(node);
  }
  return operands;
}
