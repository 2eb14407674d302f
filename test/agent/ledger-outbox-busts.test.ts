import { describe, expect, it } from 'vitest';
import { LedgerOutbox } from '../../src/agent/ledger-outbox.js';

const bust = (lots: number) => ({ venueFillId: 'ord-1@0.1', lots, at: '2026-12-02T10:00:00.000Z' });

describe('busts in the ledger outbox', () => {
  it('sends a bust once it is on disk, keeps it through a restart, and lets a later bust of the fill replace it', () => {
    const outbox = new LedgerOutbox(undefined, 0);
    outbox.add([], [], [bust(0.04)]);
    // Not yet written: nothing is sent.
    expect(outbox.next()).toEqual({ fills: [], funding: [] });
    const record = outbox.record();
    outbox.written(record);
    expect(outbox.next()).toEqual({ fills: [], funding: [], busts: [bust(0.04)] });

    // A restart before the answer: the journal's bust is sent again.
    const restarted = new LedgerOutbox(record, 0);
    const sent = restarted.next();
    expect(sent.busts).toEqual([bust(0.04)]);

    // The rest of the fill taken back while that report was under way: its lots in all replace it,
    // and the answer to the first does not take the second away.
    restarted.add([], [], [bust(0.1)]);
    restarted.confirmed(sent);
    expect(restarted.size).toBe(1);
    restarted.written(restarted.record());
    expect(restarted.next().busts).toEqual([bust(0.1)]);
    restarted.confirmed(restarted.next());
    expect(restarted.size).toBe(0);
    expect(restarted.record().busts).toBeUndefined();
  });
});
