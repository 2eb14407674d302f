import { availableParallelism } from 'node:os';

/** Where the embedded store runs inbound checks and commits: `SIGNALGATE_INBOUND_THREAD`. */
export type InboundThreadSetting = 'auto' | 'on' | 'off';

/**
 * Whether the embedded store's inbound requests go to a thread of their own. With one CPU (a
 * container limited to one, or `taskset`; `availableParallelism` reflects the affinity mask),
 * the hand-over to that thread and back costs the one core more than the thread saves it:
 * measured at about a tenth of the CPU per request (docs/decisions/0003-inbound-lanes.md).
 * With two or more,
 * the thread runs the checks and the commit beside the event loop's socket work.
 */
export function usesInboundThread(
  setting: InboundThreadSetting = 'auto',
  cpus: number = availableParallelism(),
): boolean {
  if (setting === 'on') return true;
  if (setting === 'off') return false;
  return cpus > 1;
}
