import { readFileSync } from 'node:fs';

/** The load average of the last 1, 5 and 15 minutes, as /proc says it (Linux): printed beside every figure a run reports. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
