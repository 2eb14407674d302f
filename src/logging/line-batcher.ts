import type { pino } from 'pino';

type Destination = ReturnType<typeof pino.destination>;

/**
 * Collects log lines and hands them to the destination in blocks of about `blockBytes`, and at
 * least every `flushEveryMs`. sonic-boom buffers too, but it measures the UTF-8 length of its
 * whole pending buffer on every write; with 8 KiB blocks that re-scan cost more than writing
 * the line (seen under load as 3 % of the server's CPU in `String::Utf8Length`). Here a line
 * costs an array push; the join happens once per block. The timer runs only while lines wait: a
 * timer that fired every interval woke every idle agent twenty times a second for nothing.
 */
export class LineBatcher {
  private lines: string[] = [];
  private length = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly destination: Destination,
    private readonly blockBytes: number,
    private readonly flushEveryMs: number,
  ) {
    // A process that exits without flushing (process.exit after an error) still writes its
    // last lines; writing synchronously is what an exit handler can do.
    process.once('exit', () => {
      try {
        this.flushSync();
      } catch {
        // The destination is gone (closed stdout): nothing left to write to.
      }
    });
  }

  write(line: string): boolean {
    this.lines.push(line);
    // String length, not UTF-8 bytes: the block size only needs to be about right.
    this.length += line.length;
    if (this.length >= this.blockBytes) this.handOver();
    else if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.handOver();
      }, this.flushEveryMs);
      this.timer.unref();
    }
    return true;
  }

  /** Hands over what is held and waits until the destination wrote it (pino's `logger.flush`). */
  flush(callback: (error?: Error) => void): void {
    this.handOver();
    this.destination.flush(callback);
  }

  flushSync(): void {
    this.handOver();
    this.destination.flushSync();
  }

  private handOver(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.lines.length === 0) return;
    const block = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.length = 0;
    this.destination.write(block);
  }
}
