/** A background task started by `repeatEvery`. */
export interface RepeatingTask {
  /** No round starts after this; resolves when the round under way (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `round` now, then again `intervalMs` after each round ends (never two at once), on a
 * timer that does not keep the process alive. `round` handles the errors it expects; anything
 * it throws all the same goes to `onError` and the next round still comes: thrown in a timer,
 * it would otherwise end the process.
 */
export function repeatEvery(
  intervalMs: number,
  round: () => Promise<void>,
  onError: (error: unknown) => void,
): RepeatingTask {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void>;

  const run = (): Promise<void> =>
    Promise.resolve()
      .then(round)
      .catch((error: unknown) => {
        try {
          onError(error);
        } catch {
          // Reporting the error failed too: the next round comes all the same.
        }
      })
      .finally(schedule);
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      current = run();
    }, intervalMs);
    timer.unref();
  };
  current = run();

  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
