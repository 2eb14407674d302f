/**
 * An ingest refused because its source changed (deactivated, key rotated, HMAC secret or max
 * age set) between the checks the request passed and the commit: nothing was recorded, and the
 * request is to be checked again against the source as it is now.
 */
export class SourceChangedError extends Error {
  constructor(readonly sourceId: string) {
    super(`source ${sourceId} changed while a request for it was being checked`);
    this.name = 'SourceChangedError';
  }
}
