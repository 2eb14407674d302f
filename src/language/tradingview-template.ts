/**
 * A TradingView alert message as written in the alert dialog, with `{{...}}` placeholders that
 * TradingView fills in when the alert fires. Not a signal itself: the inbound endpoint never
 * sees the placeholders. For checking one before it is saved: what each placeholder becomes
 * (sample values), the messages it can turn into (each value of the placeholder that picks the
 * action), and warnings about placeholders that make a message wrong in some cases.
 */

export interface TemplatePlaceholder {
  /** As written, braces included: `{{ticker}}`. */
  readonly written: string;
  /** The sample value it is checked with; null when TradingView's value cannot be known here. */
  readonly becomes: string | null;
  readonly note?: string;
}

export interface TemplateRendering {
  /** The placeholders' values in this rendering, by name. */
  readonly values: Readonly<Record<string, string>>;
  /** The message with them filled in. */
  readonly body: string;
}

export interface TemplateReading {
  /** Each distinct placeholder, in order of first appearance. */
  readonly placeholders: readonly TemplatePlaceholder[];
  readonly warnings: readonly string[];
  /** The message as it would arrive: with the sample values first, then each other value of the placeholder that picks the action. */
  readonly renderings: readonly TemplateRendering[];
}

const PRICE = '123.45';

/** Sample values of TradingView's placeholders (its alert documentation's names). */
const SAMPLES: ReadonlyMap<string, { value: string; note?: string }> = new Map([
  [
    'ticker',
    {
      value: 'BTCUSDT',
      note: "the chart's symbol without its exchange; map it in the agent if the venue names it otherwise",
    },
  ],
  ['exchange', { value: 'BINANCE' }],
  ['interval', { value: '60' }],
  ['open', { value: PRICE }],
  ['high', { value: PRICE }],
  ['low', { value: PRICE }],
  ['close', { value: PRICE }],
  ['volume', { value: '1000' }],
  ['time', { value: '2026-12-01T12:00:00Z' }],
  ['timenow', { value: '2026-12-01T12:00:05Z' }],
  ['syminfo.currency', { value: 'USDT' }],
  ['syminfo.basecurrency', { value: 'BTC' }],
  [
    'strategy.order.action',
    { value: 'buy', note: 'the side of each order the strategy places (buy or sell), its exits included' },
  ],
  ['strategy.order.contracts', { value: '1' }],
  ['strategy.order.price', { value: PRICE }],
  ['strategy.order.id', { value: 'Long' }],
  ['strategy.order.comment', { value: 'Long' }],
  [
    'strategy.market_position',
    { value: 'long', note: 'the position the strategy holds after the order (long, short or flat)' },
  ],
  ['strategy.market_position_size', { value: '1', note: 'the size of that position, 0 when flat' }],
  ['strategy.prev_market_position', { value: 'flat' }],
  ['strategy.prev_market_position_size', { value: '0' }],
  ['strategy.position_size', { value: '1', note: 'negative when short, 0 when flat' }],
]);

/** The placeholder that picks the action, and the values it takes (with the placeholders that go with each). */
const ACTION_VARIANTS: readonly { name: string; values: readonly Record<string, string>[] }[] = [
  {
    name: 'strategy.market_position',
    values: [
      {
        'strategy.market_position': 'long',
        'strategy.market_position_size': '1',
        'strategy.position_size': '1',
        'strategy.order.action': 'buy',
      },
      {
        'strategy.market_position': 'short',
        'strategy.market_position_size': '1',
        'strategy.position_size': '-1',
        'strategy.order.action': 'sell',
      },
      {
        'strategy.market_position': 'flat',
        'strategy.market_position_size': '0',
        'strategy.position_size': '0',
        'strategy.order.action': 'sell',
      },
    ],
  },
  { name: 'strategy.order.action', values: [{ 'strategy.order.action': 'buy' }, { 'strategy.order.action': 'sell' }] },
];

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;

/** Null when the message holds no `{{...}}` placeholder. */
export function readTradingViewTemplate(message: string): TemplateReading | null {
  const names: string[] = [];
  for (const match of message.matchAll(PLACEHOLDER)) {
    const name = match[1]!.trim();
    if (!names.includes(name)) names.push(name);
  }
  if (names.length === 0) return null;

  const placeholders = names.map((name): TemplatePlaceholder => {
    if (name === 'strategy.order.alert_message') {
      return {
        written: `{{${name}}}`,
        becomes: null,
        note: 'the alert_message your script gives each order; check each of those messages itself',
      };
    }
    if (/^plot_\d+$/.test(name) || /^plot\(".*"\)$/.test(name))
      return { written: `{{${name}}}`, becomes: PRICE, note: 'a value your script plots' };
    const sample = SAMPLES.get(name);
    if (sample === undefined)
      return {
        written: `{{${name}}}`,
        becomes: null,
        note: 'not a TradingView placeholder signalgate knows: it is checked as written',
      };
    return { written: `{{${name}}}`, becomes: sample.value, ...(sample.note !== undefined && { note: sample.note }) };
  });

  const warnings: string[] = [];
  if (names.includes('strategy.order.action')) {
    warnings.push(
      '{{strategy.order.action}} is buy or sell for every order of a strategy, its exits too: a sell that closes a long would open a short here. Make the action position{{strategy.market_position}} instead, which becomes positionlong, positionshort or positionflat, the position the strategy holds after the order',
    );
  }
  for (const match of message.matchAll(PLACEHOLDER)) {
    if (match[1]!.trim() !== 'strategy.market_position') continue;
    if (!message.slice(0, match.index).toLowerCase().endsWith('position')) {
      warnings.push(
        "{{strategy.market_position}} alone becomes long, short or flat: long is buy and short is sell, which open another position at every alert, and flat is no action. Write position{{strategy.market_position}}, which keeps the account at the strategy's position",
      );
      break;
    }
  }
  for (const size of ['strategy.market_position_size', 'strategy.position_size']) {
    if (names.includes(size)) {
      warnings.push(
        `{{${size}}} is 0 when the strategy is flat${size === 'strategy.position_size' ? ' and negative when short' : ''}, which no volume may be: give a fixed size (vol=1) or a risk-based one (vol_pctbal_loss=1 with a stop) instead`,
      );
    }
  }
  if (names.includes('strategy.order.alert_message')) {
    warnings.push(
      "{{strategy.order.alert_message}} is whatever your script's alert_message says for each order: the message cannot be checked here; check each alert_message of the script, with the symbol written out",
    );
  }

  const samples: Record<string, string> = {};
  for (const placeholder of placeholders) {
    if (placeholder.becomes !== null) samples[placeholder.written.slice(2, -2).trim()] = placeholder.becomes;
  }
  const variant = ACTION_VARIANTS.find((v) => names.includes(v.name));
  const valueSets =
    variant === undefined ? [samples] : variant.values.map((values) => ({ ...samples, ...pick(values, names) }));
  const renderings = valueSets.map((values): TemplateRendering => ({ values, body: fill(message, values) }));
  return { placeholders, warnings, renderings };
}

/** Only the values of placeholders the message uses. */
function pick(values: Readonly<Record<string, string>>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([name]) => names.includes(name)));
}

function fill(message: string, values: Readonly<Record<string, string>>): string {
  return message.replace(PLACEHOLDER, (written, name: string) => values[name.trim()] ?? written);
}
