import { describe, expect, it } from 'vitest';
import { readTradingViewTemplate } from '../../src/language/index.js';

describe('a TradingView alert message with placeholders', () => {
  it('is not a template without {{...}}', () => {
    expect(readTradingViewTemplate('EURUSD,buy,vol=1')).toBeNull();
    expect(readTradingViewTemplate('{"symbol":"EURUSD","action":"buy"}')).toBeNull();
  });

  it('fills in sample values, and checks the message once when no placeholder picks the action', () => {
    const reading = readTradingViewTemplate('{{ticker}},buy,sl_price={{ low }},comment={{strategy.order.id}}')!;
    expect(reading.placeholders.map((p) => [p.written, p.becomes])).toEqual([
      ['{{ticker}}', 'BTCUSDT'],
      ['{{low}}', '123.45'],
      ['{{strategy.order.id}}', 'Long'],
    ]);
    expect(reading.renderings.map((r) => r.body)).toEqual(['BTCUSDT,buy,sl_price=123.45,comment=Long']);
    expect(reading.warnings).toEqual([]);
  });

  it('leaves what it cannot know as written, and says so', () => {
    const reading = readTradingViewTemplate('{{strategy.order.alert_message}}')!;
    expect(reading.placeholders).toEqual([
      {
        written: '{{strategy.order.alert_message}}',
        becomes: null,
        note: expect.stringContaining('check each of those messages itself'),
      },
    ]);
    expect(reading.renderings.map((r) => r.body)).toEqual(['{{strategy.order.alert_message}}']);
    expect(reading.warnings).toEqual([expect.stringMatching(/cannot be checked here/)]);
    const unknown = readTradingViewTemplate('{{tickr}},buy')!;
    expect(unknown.placeholders[0]).toMatchObject({
      written: '{{tickr}}',
      becomes: null,
      note: expect.stringContaining('not a TradingView placeholder'),
    });
    expect(unknown.renderings[0]!.body).toBe('{{tickr}},buy');
  });

  it('turns a market position into long, short and flat, with the sizes that go with each, and warns of sizes that are 0 when flat', () => {
    const reading = readTradingViewTemplate(
      '{{ticker}},position{{strategy.market_position}},vol={{strategy.market_position_size}}',
    )!;
    expect(reading.renderings.map((r) => r.body)).toEqual([
      'BTCUSDT,positionlong,vol=1',
      'BTCUSDT,positionshort,vol=1',
      'BTCUSDT,positionflat,vol=0',
    ]);
    expect(reading.warnings).toEqual([
      expect.stringMatching(/^\{\{strategy\.market_position_size\}\} is 0 when the strategy is flat/),
    ]);
  });

  it('warns of the order action, and of the market position without position before it', () => {
    expect(readTradingViewTemplate('{{ticker}},{{strategy.order.action}}')!.renderings.map((r) => r.body)).toEqual([
      'BTCUSDT,buy',
      'BTCUSDT,sell',
    ]);
    expect(readTradingViewTemplate('{{ticker}},{{strategy.order.action}}')!.warnings).toEqual([
      expect.stringContaining('its exits too'),
    ]);
    expect(readTradingViewTemplate('{{ticker}},{{strategy.market_position}}')!.warnings).toEqual([
      expect.stringMatching(/alone becomes long, short or flat/),
    ]);
    expect(readTradingViewTemplate('{{ticker}},POSITION{{strategy.market_position}}')!.warnings).toEqual([]);
  });
});
