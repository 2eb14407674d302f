import { ErrorCode, type Problem } from '../errors/catalog.js';

/** What an admin operation answers: its value, or the problems that stopped it (nothing changed). */
export type AdminResult<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

export function refuse<T>(...problems: Problem[]): AdminResult<T> {
  return { ok: false, problems };
}

export function notFound<T>(what: string, id: string): AdminResult<T> {
  return refuse({ code: ErrorCode.NOT_FOUND, detail: `no ${what} with id '${id}'`, param: 'id' });
}
