/**
 * Decimal rounding. Prices, lots and money are decimal quantities held in binary floats; every
 * computed one is rounded back to its decimal grid so that, for example, a stop computed as
 * 1.1 - 20 pips compares equal to a tick quoted "1.09800".
 */

/** Decimal places of a step such as 0.0001 (4), 0.01 (2) or 1 (0); at most 12. */
export function decimalsOf(step: number): number {
  for (let d = 0; d <= 12; d++) {
    const scaled = step * 10 ** d;
    if (Math.abs(scaled - Math.round(scaled)) < 1e-9 * Math.max(1, scaled)) return d;
  }
  return 12;
}

/** Powers of ten by exponent: `10 ** d` costs a Math.pow call on a path run per position per tick. */
const POWERS_OF_TEN: readonly number[] = Array.from({ length: 16 }, (_, d) => 10 ** d);

export function powerOfTen(exponent: number): number {
  return POWERS_OF_TEN[exponent] ?? 10 ** exponent;
}

/** x rounded to `decimals` places, as the float nearest to that decimal. */
export function roundTo(x: number, decimals: number): number {
  const scale = powerOfTen(decimals);
  return Math.round(x * scale) / scale;
}

/** Money in account currency, to the cent. */
export function roundMoney(amount: number): number {
  // Math.round rounds -0.5 up; round the magnitude so losses and gains round alike.
  const cents = Math.round(Math.abs(amount) * 100) / 100;
  return amount < 0 && cents !== 0 ? -cents : cents;
}
