import { describe, expect, it } from 'vitest';
import { lots, pips, sig, simulation } from './simulation.js';

/** What the account holds on a symbol: each position's side and lots, and each pending order's side. */
function holding(sim: ReturnType<typeof simulation>, symbol = 'EURUSD') {
  return {
    positions: sim.state.positions.filter((p) => p.symbol === symbol).map((p) => `${p.side} ${p.volume}`),
    orders: sim.state.orders.filter((o) => o.symbol === symbol).map((o) => `${o.side} ${o.kind}`),
  };
}

describe('position targets', () => {
  it('long → flat → short → long → flat holds exactly what the strategy holds after each step', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    const steps: [Parameters<typeof sig>[1], string[]][] = [
      ['positionlong', ['buy 1']],
      ['positionflat', []],
      ['positionshort', ['sell 1']],
      ['positionlong', ['buy 1']],
      ['positionflat', []],
    ];
    for (const [action, positions] of steps) {
      const result = sim.signal(sig('EURUSD', action, { volume: lots(1), sl: pips(20) }));
      expect(result.outcome.status).toBe('executed');
      expect(holding(sim).positions).toEqual(positions);
    }
  });

  it('sent twice changes nothing the second time, and says so', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'positionshort', { volume: lots(1) }));
    const again = sim.signal(sig('EURUSD', 'positionshort', { volume: lots(1) }));
    expect(again.events).toEqual([]);
    expect(again.outcome).toEqual({ status: 'executed', message: 'EURUSD is already short; nothing to do' });
    expect(holding(sim).positions).toEqual(['sell 1']);
    sim.signal(sig('EURUSD', 'positionflat'));
    expect(sim.signal(sig('EURUSD', 'positionflat')).outcome).toEqual({
      status: 'executed',
      message: 'EURUSD is already flat; nothing to do',
    });
  });

  it("cancels the symbol's pending entries and leaves other symbols alone", () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.tick('GBPUSD', 1.25, 1.2502);
    sim.signal(sig('EURUSD', 'buylimit', { volume: lots(1), entry: pips(50) }));
    sim.signal(sig('EURUSD', 'sellstop', { volume: lots(1), entry: pips(50) }));
    sim.signal(sig('GBPUSD', 'buy', { volume: lots(1) }));
    sim.signal(sig('EURUSD', 'positionlong', { volume: lots(0.5) }));
    expect(holding(sim)).toEqual({ positions: ['buy 0.5'], orders: [] });
    expect(holding(sim, 'GBPUSD').positions).toEqual(['buy 1']);
  });

  it('a long target on an account holding both sides (hedged) closes the shorts and keeps the long', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1) }));
    sim.signal(sig('EURUSD', 'sell', { volume: lots(2) }));
    const { events } = sim.signal(sig('EURUSD', 'positionlong', { volume: lots(3) }));
    expect(events.map((e) => e.type)).toEqual(['closed']);
    expect(holding(sim).positions).toEqual(['buy 1']);
  });

  it('with a comment, only touches the positions and orders with that comment', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'sell', { volume: lots(1), comment: 'other' }));
    sim.signal(sig('EURUSD', 'positionlong', { volume: lots(1), comment: 'trend' }));
    expect(holding(sim).positions).toEqual(['sell 1', 'buy 1']);
    sim.signal(sig('EURUSD', 'positionflat', { comment: 'TREND' }));
    expect(holding(sim).positions).toEqual(['sell 1']);
  });

  it('an opening the engine refuses refuses the whole target: nothing closed', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'sell', { volume: lots(1) }));
    // risk sizing without a stop cannot size
    const result = sim.signal(sig('EURUSD', 'positionlong', { volume: { type: 'dollar', value: 100 } }));
    expect(result.outcome.status).toBe('rejected');
    expect(holding(sim).positions).toEqual(['sell 1']);
  });
});
