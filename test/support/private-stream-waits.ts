import { waitUntil } from '../delivery/support/delivery-setup.js';

/** A request the test exchange answered, as its hooks give it. */
interface AnsweredRequest {
  method: string;
  path: string;
  params: Record<string, string>;
}

/** Resolves once the agent publishes its private stream connected `connections` times in all. */
export function streamConnected(published: () => Promise<any>, connections: number): Promise<void> {
  return waitUntil(
    async () => {
      const stream = (await published())?.privateStream;
      return stream?.state === 'connected' && stream.connections === connections;
    },
    `the private stream connected (${connections})`,
    20_000,
  );
}

/**
 * Resolves between two management passes: 300 ms after a look-up of the order (`isLookUp`)
 * answered 1.5 s or more after the one before it. The first look-up seen may be a pass the
 * stream's connection called in at any moment, or one that also reconciles and looks up again at
 * once; agents started with `--reconcile-every 3600` reconcile only at start and at a
 * (re)connection, so a pass every 2 s from then on looks the order up once, at its start, and the
 * next look-up is about 1.7 s away. `onAnswered` sets (or, with null, clears) the exchange's hook.
 */
export function betweenPasses(
  onAnswered: (hook: ((request: AnsweredRequest) => void) | null) => void,
  isLookUp: (request: AnsweredRequest) => boolean,
): Promise<void> {
  return new Promise<void>((resolve) => {
    let last = 0;
    onAnswered((request) => {
      if (!isLookUp(request)) return;
      const now = Date.now();
      if (last > 0 && now - last >= 1500) {
        onAnswered(null);
        setTimeout(resolve, 300);
      }
      last = now;
    });
  });
}
