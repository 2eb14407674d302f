/** A background task started by `repeatEvery`. */
export interface RepeatingTask {
  /** No round starts after this; resolves when the round under way (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `round` now, then again `intervalMs` after each round ends (never two at once), on a
 * timer that does not keep the process alive. `round` handles its own errors.
 */
export function repeatEvery(intervalMs: number, round: () => Promise<void>): RepeatingTask {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void>;

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      current = round().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  current = round().finally(schedule);

  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
