/**
 * The ISO 8601 text of an instant (`Date#toISOString`), remembered for the last instant asked:
 * under load the requests of one event-loop turn share a millisecond, and each asks for its
 * receive time, its idempotency window's start and its expiry in this form.
 */
export class InstantText {
  private millis = Number.NaN;
  private text = '';

  of(millis: number): string {
    if (millis !== this.millis) {
      this.text = new Date(millis).toISOString();
      this.millis = millis;
    }
    return this.text;
  }
}
