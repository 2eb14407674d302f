/**
 * fast-check arbitraries for the language property tests: valid normalized signals (built from
 * the rules, not from the parser), and their renderings as JSON bodies in the flat and typed
 * styles.
 */
import fc from 'fast-check';
import { formatDecimal } from '../../src/language/decimal-number.js';
import {
  ACTIONS,
  CANCEL_ACTIONS,
  CLOSE_ACTIONS,
  PENDING_ACTIONS,
  POSITION_ACTIONS,
  PRICE_UNITS,
  VOLUME_TYPES,
  type Action,
  type Distance,
  type NormalizedSignal,
  type PriceUnit,
  type TakeProfitLevel,
  type Volume,
} from '../../src/language/index.js';

const SELL_SIDE: readonly Action[] = [
  'sell',
  'closelongsell',
  'closeshortsell',
  'selllimit',
  'sellstop',
  'positionshort',
];

/** Positive finite doubles: every magnitude (subnormals to huge), plus the prices and sizes people type. */
const positive = fc.oneof(
  fc.double({ min: Number.MIN_VALUE, max: 1e300, noNaN: true, noDefaultInfinity: true }),
  fc.integer({ min: 1, max: 100_000 }).map((n) => n / 100),
  fc.integer({ min: 1, max: 2_000_000 }).map((n) => n / 100_000),
  fc.integer({ min: 1, max: 1000 }),
);
const nonNegative = fc.oneof(fc.constant(0), positive);
/** (0, limit), or (0, limit] when inclusive. */
const percentUpTo = (limit: number, inclusive: boolean): fc.Arbitrary<number> =>
  fc.oneof(
    fc.double({ min: Number.MIN_VALUE, max: limit, maxExcluded: !inclusive, noNaN: true }),
    fc.integer({ min: 1, max: inclusive ? limit : limit - 1 }),
  );

const symbol = fc.stringMatching(/^[A-Z0-9][A-Z0-9._\-/#+!$@&^:]{0,31}$/);

const comment = fc
  .oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 64 }),
    fc.constantFrom('a, b', 'say "hi"', '""', ',', 'x=y', '"quoted"', 'Grid #2', '  ', 'é✓ü'),
  )
  .map((text) => text.trim())
  .filter((text) => text !== '' && [...text].length <= 64 && !/[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u.test(text));

const distance = (role: 'sl' | 'tp' | 'entry', action: Action): fc.Arbitrary<Distance> =>
  fc.constantFrom(...PRICE_UNITS).chain((type) => {
    let value = positive;
    if (type === 'percent') {
      const belowHundred =
        (role === 'sl' && !SELL_SIDE.includes(action)) ||
        (role === 'tp' && SELL_SIDE.includes(action)) ||
        (role === 'entry' && (action === 'buylimit' || action === 'sellstop'));
      value = belowHundred ? percentUpTo(100, false) : positive;
    }
    return value.map((v) => ({ type, value: v }));
  });

const volume: fc.Arbitrary<Volume> = fc.constantFrom(...VOLUME_TYPES).chain((type) =>
  (type === 'pctbal_loss' || type === 'pcteq_loss' ? percentUpTo(100, true) : positive).map((value) => ({
    type,
    value,
  })),
);

/** 1 to 10 levels whose whole-percent shares are each at least 1 and total at most 100. */
const takeProfit = (action: Action): fc.Arbitrary<TakeProfitLevel[]> =>
  fc.integer({ min: 1, max: 10 }).chain((count) =>
    fc
      .tuple(
        fc.array(distance('tp', action), { minLength: count, maxLength: count }),
        fc.integer({ min: count, max: 100 }),
        fc.array(fc.nat(20), { minLength: count, maxLength: count }),
      )
      .map(([levels, total, weights]) => {
        const weightSum = weights.reduce((a, b) => a + b, 0) || 1;
        return levels.map((level, index) => ({
          ...level,
          pct: 1 + Math.floor(((total - count) * weights[index]!) / weightSum),
        }));
      }),
  );

const opening = (action: Action) =>
  fc.record(
    {
      volume,
      sl: distance('sl', action),
      tp: takeProfit(action),
      trail: fc.record({ trigger: nonNegative, distance: positive, step: nonNegative }).map((trail) => ({ ...trail })),
      breakeven: fc
        .tuple(nonNegative, fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), fc.boolean())
        .map(([trigger, fraction, noOffset]) => ({ trigger, offset: noOffset ? 0 : trigger * fraction }))
        .filter(({ trigger, offset }) => offset === 0 || offset < trigger),
      opposite: fc.constantFrom('exit' as const, 'exit_and_enter' as const),
    },
    { requiredKeys: [] },
  );

export const validSignal: fc.Arbitrary<NormalizedSignal> = fc
  .record({ symbol, action: fc.constantFrom(...ACTIONS), comment: fc.option(comment, { nil: undefined }) })
  .chain(({ symbol, action, comment }) => {
    const base: NormalizedSignal = { symbol, action, ...(comment !== undefined && { comment }) };
    if (CANCEL_ACTIONS.includes(action)) return fc.constant(base);
    if (CLOSE_ACTIONS.includes(action)) {
      const close = fc.oneof(
        percentUpTo(100, true).map((pct) => ({ pct })),
        positive.map((lots) => ({ lots })),
      );
      return fc
        .option(close, { nil: undefined })
        .map((amount) => ({ ...base, ...(amount !== undefined && { close: amount }) }));
    }
    const entry = PENDING_ACTIONS.includes(action) ? distance('entry', action) : fc.constant(undefined);
    return fc.tuple(opening(action), entry, distance('sl', action)).map(([parameters, entryValue, stop]) => {
      const signal: NormalizedSignal = { ...base, ...parameters };
      // A position target closes the other side itself: exop and exent do not apply.
      if (POSITION_ACTIONS.includes(action)) delete signal.opposite;
      if (entryValue !== undefined) signal.entry = entryValue;
      // Risk-based sizing needs a stop loss.
      if (
        signal.volume !== undefined &&
        ['dollar', 'pctbal_loss', 'pcteq_loss'].includes(signal.volume.type) &&
        signal.sl === undefined
      ) {
        signal.sl = stop;
      }
      return signal;
    });
  });

const VOLUME_NAMES: Record<Volume['type'], string> = {
  lots: 'vol',
  pctbal: 'vol_pctbal',
  pcteq: 'vol_pcteq',
  dollar: 'vol_dollar',
  pctbal_loss: 'vol_pctbal_loss',
  pcteq_loss: 'vol_pcteq_loss',
};

/** A number as a JSON number, or as a numeric string (the contract allows both). */
type NumberStyle = (value: number) => number | string;
const asNumber: NumberStyle = (value) => value;
const asString: NumberStyle = (value) => formatDecimal(value);

/** The JSON body of a signal: flat keys, or the typed keys where the signal allows them. */
export function renderSignalJson(signal: NormalizedSignal, typed: boolean, numbersAsStrings: boolean): string {
  const n = numbersAsStrings ? asString : asNumber;
  const body: Record<string, unknown> = { symbol: signal.symbol, action: signal.action };
  if (signal.comment !== undefined) body.comment = signal.comment;
  if (signal.volume !== undefined) {
    if (typed) {
      body.volume = n(signal.volume.value);
      body.volumeType = signal.volume.type;
    } else {
      body[VOLUME_NAMES[signal.volume.type]] = n(signal.volume.value);
    }
  }
  const typedDistance = (key: string, given: Distance): void => {
    body[key] = n(given.value);
    body[`${key}Type`] = given.type;
  };
  if (signal.sl !== undefined) {
    if (typed) typedDistance('sl', signal.sl);
    else body[`sl_${signal.sl.type}`] = n(signal.sl.value);
  }
  if (signal.tp !== undefined) {
    const [only] = signal.tp;
    if (signal.tp.length === 1 && only !== undefined && only.pct === 100) {
      if (typed) typedDistance('tp', only);
      else body[`tp_${only.type}`] = n(only.value);
    } else {
      signal.tp.forEach((level, index) => {
        body[`tp${index + 1}_${level.type satisfies PriceUnit}`] = n(level.value);
        body[`pct${index + 1}`] = n(level.pct);
      });
    }
  }
  if (signal.entry !== undefined) body[`entry_${signal.entry.type}`] = n(signal.entry.value);
  if (signal.trail !== undefined) {
    body.trail_trigger = n(signal.trail.trigger);
    body.trail_distance = n(signal.trail.distance);
    body.trail_step = n(signal.trail.step);
  }
  if (signal.breakeven !== undefined) {
    body.be_trigger = n(signal.breakeven.trigger);
    body.be_offset = n(signal.breakeven.offset);
  }
  if (signal.close !== undefined) {
    if ('pct' in signal.close) body.pct = n(signal.close.pct);
    else body.pct_lots = n(signal.close.lots);
  }
  if (signal.opposite !== undefined) body[signal.opposite === 'exit' ? 'exop' : 'exent'] = true;
  return JSON.stringify(body);
}
