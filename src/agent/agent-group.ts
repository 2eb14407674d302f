import type { Logger } from 'pino';

/** One agent of a group, and the log it speaks on. */
export interface GroupMember {
  run(): Promise<void>;
  stop(): Promise<void>;
  log: Logger;
}

/**
 * Several agents in one process (`--tokens-file`): they share the process's warmed-up code and
 * its wake-ups, and each keeps its own token, account file and lock. An agent that fails (its
 * token refused, its account file damaged, its disk) stops alone, said at error, and the server
 * sees it disconnect; the others go on, as they would in processes of their own. The group ends
 * when every agent has: resolved after `stop()`; otherwise it rejects with a failure that is not
 * a refusal if there was one (exit 1), else with a refusal (exit 2).
 */
export class AgentGroup {
  private stopping = false;

  constructor(
    private readonly members: readonly GroupMember[],
    /** Names a failure the operator must fix before starting again (a refusal), or null. */
    private readonly refusal: (err: unknown) => string | null,
  ) {}

  async run(): Promise<void> {
    let failed: { err: unknown } | null = null;
    let refused: { err: unknown } | null = null;
    await Promise.all(
      this.members.map(async (member) => {
        try {
          await member.run();
        } catch (err) {
          const reason = this.refusal(err);
          if (reason !== null) refused ??= { err };
          else failed ??= { err };
          member.log.error(
            { err: (err as Error).message },
            `${reason ?? 'agent failed'}: this agent stopped; the others in this process go on`,
          );
        }
      }),
    );
    if (this.stopping) return;
    const ended = (failed ?? refused) as { err: unknown } | null;
    if (ended !== null) throw ended.err;
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    await Promise.all(this.members.map((member) => member.stop()));
  }
}
