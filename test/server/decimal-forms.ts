// Decimals of a given precision and scale written as JSON number tokens in every form JSON allows (plain, with
// trailing zeros, with an exponent in either case and sign), with the canonical text the service writes back:
// no exponent, no trailing fraction zeros, no point without a fraction, no -0 (src/server/json.ts writes stored
// decimals this way). Shared by the body checks' tests and the end-to-end ones.
import fc from 'fast-check';

export interface DecimalSent {
  /** A JSON number token (also valid as a numeric string). */
  readonly token: string;
  /** The value as the service writes it back. */
  readonly canonical: string;
}

/** `units` × 10^-scale as plain decimal text, with exactly `scale` fraction digits (`scaled(5n, 2)` is `0.05`). */
export function scaled(units: bigint, scale: number): string {
  const digits = units.toString().padStart(scale + 1, '0');
  return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** The canonical text of plain decimal text without a sign. */
function canonicalOf(plain: string): string {
  return plain.includes('.') ? plain.replace(/0+$/, '').replace(/\.$/, '') : plain;
}

/**
 * Any decimal with at most `precision - scale` digits before the point and `scale` after, the digit counts chosen
 * first so that short and long values both come up, the full precision (more digits than a double keeps) half the
 * time each; positive only when `positive`.
 */
export function decimalSent(precision: number, scale: number, positive = false): fc.Arbitrary<DecimalSent> {
  const digits = (max: number) => fc.oneof(fc.constant(max), fc.integer({ min: 0, max }));
  return fc
    .tuple(digits(precision - scale), digits(scale))
    .filter(([whole, fraction]) => !positive || whole + fraction > 0)
    .chain(([whole, fraction]) =>
      fc.tuple(
        fc.constant(fraction),
        fc.bigInt({ min: positive ? 1n : 0n, max: 10n ** BigInt(whole + fraction) - 1n }),
        positive ? fc.constant(false) : fc.boolean(),
        fc.constantFrom('plain', 'zeros', 'e-', 'E+', 'e', 'point-exponent'),
        fc.integer({ min: 0, max: 4 }),
      ),
    )
    .map(([fraction, units, negative, form, k]): DecimalSent => {
      const plain = scaled(units, fraction);
      const canonical = canonicalOf(plain);
      let token: string;
      switch (form) {
        case 'plain':
          token = plain;
          break;
        case 'zeros': // trailing zeros after the point: `12.500`, `7.0`
          token = `${plain}${fraction === 0 ? '.' : ''}${'0'.repeat(k + 1)}`;
          break;
        case 'e-': // the integer of units with a negative exponent: `1250e-2`, `0e-4`
          token = `${units === 0n ? '0' : `${units}${'0'.repeat(k)}`}e-${fraction + k}`;
          break;
        case 'E+': // a mantissa k places smaller with a positive exponent: `1.25E+1`
          token = `${scaled(units, fraction + k)}E+${k}`;
          break;
        case 'e': // an unsigned exponent: `0.125e1`
          token = `${scaled(units, fraction + k)}e${k}`;
          break;
        default: // a mantissa k places larger with a negative exponent: `125.0E-1`
          token = `${scaled(units * 10n ** BigInt(k), fraction)}E-${k}`;
      }
      return {
        token: negative ? `-${token}` : token,
        canonical: negative && canonical !== '0' ? `-${canonical}` : canonical,
      };
    });
}
