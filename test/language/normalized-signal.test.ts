import { describe, expect, it } from 'vitest';
import { signalOf } from './outcome.js';

describe('the normalized signal', () => {
  it('is the same for the text and JSON forms of one signal', () => {
    const fromText = signalOf('EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40');
    const fromJson = signalOf(
      '{"symbol":"eurusd","action":"BUY","volume":0.1,"volumeType":"lots","sl":20,"slType":"pips","tp":40,"tpType":"pips"}',
      'json',
    );
    expect(fromText).toStrictEqual({
      symbol: 'EURUSD',
      action: 'buy',
      volume: { type: 'lots', value: 0.1 },
      sl: { type: 'pips', value: 20 },
      tp: [{ type: 'pips', value: 40, pct: 100 }],
    });
    expect(fromJson).toStrictEqual(fromText);
  });

  it('holds only symbol and action when nothing else is given (absent means not given)', () => {
    expect(signalOf('EURUSD,buy')).toStrictEqual({ symbol: 'EURUSD', action: 'buy' });
    expect(signalOf('{"symbol":"EURUSD","action":"buy"}', 'json')).toStrictEqual({ symbol: 'EURUSD', action: 'buy' });
  });

  it('carries every section with its canonical names', () => {
    expect(
      signalOf(
        'gbpusd,Short,comment="Swing A",vol_pctbal_loss=1.5,sl_price=1.2750,tp_percent=2,trail_distance=15,be_trigger=20,exent',
      ),
    ).toStrictEqual({
      symbol: 'GBPUSD',
      action: 'sell',
      comment: 'Swing A',
      volume: { type: 'pctbal_loss', value: 1.5 },
      sl: { type: 'price', value: 1.275 },
      tp: [{ type: 'percent', value: 2, pct: 100 }],
      trail: { trigger: 0, distance: 15, step: 0 },
      breakeven: { trigger: 20, offset: 0 },
      opposite: 'exit_and_enter',
    });
    expect(signalOf('EURUSD,buystop,entry_pips=10,vol=1,exop')).toStrictEqual({
      symbol: 'EURUSD',
      action: 'buystop',
      volume: { type: 'lots', value: 1 },
      entry: { type: 'pips', value: 10 },
      opposite: 'exit',
    });
    expect(signalOf('EURUSD,closeall,pct=25,comment=grid')).toStrictEqual({
      symbol: 'EURUSD',
      action: 'closeall',
      comment: 'grid',
      close: { pct: 25 },
    });
    expect(signalOf('EURUSD,closesell,pct_lots=0.3')).toStrictEqual({
      symbol: 'EURUSD',
      action: 'closesell',
      close: { lots: 0.3 },
    });
  });

  it('writes out the trail and breakeven defaults and keeps given values', () => {
    expect(
      signalOf('EURUSD,buy,trail_trigger=10,trail_distance=5,trail_step=2,be_trigger=8,be_offset=1').trail,
    ).toStrictEqual({
      trigger: 10,
      distance: 5,
      step: 2,
    });
    expect(signalOf('EURUSD,buy,be_trigger=8,be_offset=1').breakeven).toStrictEqual({ trigger: 8, offset: 1 });
  });

  it('maps the aliases to canonical names', () => {
    expect(signalOf('EURUSD,long').action).toBe('buy');
    expect(signalOf('EURUSD,short').action).toBe('sell');
    expect(signalOf('EURUSD,closelong').action).toBe('closebuy');
    expect(signalOf('EURUSD,closeshort').action).toBe('closesell');
    expect(signalOf('EURUSD,buy,vol_lots=0.2').volume).toStrictEqual({ type: 'lots', value: 0.2 });
  });

  it('maps every volume parameter to its type', () => {
    const types = {
      vol: 'lots',
      vol_pctbal: 'pctbal',
      vol_pcteq: 'pcteq',
      vol_dollar: 'dollar',
      vol_pctbal_loss: 'pctbal_loss',
      vol_pcteq_loss: 'pcteq_loss',
    };
    for (const [name, type] of Object.entries(types)) {
      expect(signalOf(`EURUSD,buy,${name}=2,sl_pips=10`).volume).toStrictEqual({ type, value: 2 });
    }
  });

  it('knows every action of the signal language', () => {
    for (const action of [
      'buy',
      'sell',
      'closebuy',
      'closesell',
      'closeall',
      'closelongbuy',
      'closelongsell',
      'closeshortbuy',
      'closeshortsell',
      'cancellong',
      'cancelshort',
    ]) {
      expect(signalOf(`EURUSD,${action}`).action).toBe(action);
    }
    for (const action of ['buylimit', 'selllimit', 'buystop', 'sellstop']) {
      expect(signalOf(`EURUSD,${action},entry_price=1.1`).action).toBe(action);
    }
  });

  it('treats names, actions and the symbol case-insensitively, and keeps the case of the comment', () => {
    const signal = signalOf(' eUrUsD , CloseLongBuy , VOL=1 , Sl_Pips=20 , COMMENT = My Strat , EXENT ');
    expect(signal).toStrictEqual({
      symbol: 'EURUSD',
      action: 'closelongbuy',
      comment: 'My Strat',
      volume: { type: 'lots', value: 1 },
      sl: { type: 'pips', value: 20 },
      opposite: 'exit_and_enter',
    });
    expect(
      signalOf('{"SYMBOL":" eurusd ","Action":"Long","VolumeType":"PCTBAL","VOLUME":"2","Comment":"My Strat"}', 'json'),
    ).toStrictEqual({
      symbol: 'EURUSD',
      action: 'buy',
      comment: 'My Strat',
      volume: { type: 'pctbal', value: 2 },
    });
  });
});
