import { randomBytes } from 'node:crypto';

/** Tells apart ids made by several instances in the same millisecond; drawn once per process. */
const instanceTag = randomBytes(4).toString('hex');
let lastMillis = 0;
let counter = 0;
let timePart = '';

/**
 * Signal ids sort in acceptance order within one process (time, then a counter), so the
 * signal log lists same-millisecond signals in the order they arrived. No randomness is drawn
 * per id: this runs on every inbound request.
 */
export function newSignalId(nowMillis: number): string {
  if (nowMillis > lastMillis) {
    lastMillis = nowMillis;
    counter = 0;
    // Written once per millisecond: the requests of a busy one share it.
    timePart = `sig_${lastMillis.toString(36).padStart(9, '0')}`;
  } else {
    counter += 1;
    if (timePart === '') timePart = `sig_${lastMillis.toString(36).padStart(9, '0')}`;
  }
  const seq = counter.toString(36).padStart(4, '0');
  return `${timePart}${seq}${instanceTag}`;
}
