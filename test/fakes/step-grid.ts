/** Numbers on an exchange's grid of ticks or lot steps, as the test exchanges write and check them. */

/** The decimals of `step` (0.001: 3, 5: 0). */
export function decimals(step: number): number {
  const [mantissa, exponent] = step.toExponential().split('e');
  return Math.max(0, (mantissa!.split('.')[1]?.length ?? 0) - Number(exponent));
}

/** Whether `value` is a whole number of steps (within floating-point noise). */
export function onGrid(value: number, step: number): boolean {
  const k = value / step;
  return Math.abs(k - Math.round(k)) < 1e-6;
}

/** `value` to the nearest step, without floating-point tails. */
export function round(value: number, step: number): number {
  return Number((Math.round(value / step) * step).toFixed(decimals(step)));
}

/** `value` written with the step's decimals, as exchanges answer numbers in strings. */
export function fmt(value: number, step: number): string {
  return value.toFixed(decimals(step));
}
