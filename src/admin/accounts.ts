import type { Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import { periodEnd, periodOf } from '../metering/quota-period.js';
import { newId } from '../security/random-secrets.js';
import type { AccountPatch, Store } from '../store/store.js';
import { type AdminResult, notFound, refuse } from './admin-result.js';
import { FieldReader } from './field-reader.js';
import { textField, wholeNumberField } from './field-schemas.js';
import { objectSchema } from '../openapi/index.js';
import { type ListQuery, readListQuery, unknownCursor } from './list-query.js';
import { accountView } from './views.js';
import { ErrorCode } from '../errors/catalog.js';

export const MAX_MONTHLY_QUOTA = 1_000_000_000;

const ACCOUNT_FIELDS = {
  name: textField(200, 'what the account is called', 'Alice'),
  monthlySignalQuota: wholeNumberField(
    0,
    MAX_MONTHLY_QUOTA,
    'signals the account may send per calendar month (UTC)',
    1000,
  ),
};

/** The body of `POST /api/admin/accounts` (and `signalgate accounts create`). */
export const CREATE_ACCOUNT_BODY = objectSchema(ACCOUNT_FIELDS, ['name', 'monthlySignalQuota']);
/** The body of `PATCH /api/admin/accounts/{id}`: any of the fields, at least one. */
export const UPDATE_ACCOUNT_BODY = objectSchema(ACCOUNT_FIELDS, [], 'at least one field');

export async function createAccount(
  store: Store,
  body: unknown,
  nowMillis: number,
): Promise<AdminResult<ReturnType<typeof accountView>>> {
  const fields = new FieldReader(body, CREATE_ACCOUNT_BODY);
  const name = fields.string('name');
  const quota = fields.integer('monthlySignalQuota');
  fields.rejectUnknown();
  if (fields.problems.length > 0 || typeof name !== 'string' || quota === undefined) return refuse(...fields.problems);
  const account = {
    id: newId('acc'),
    name: name.trim(),
    monthlySignalQuota: quota,
    createdAt: new Date(nowMillis).toISOString(),
  };
  await store.accounts.create(account);
  return { ok: true, value: accountView(account) };
}

export async function showAccount(store: Store, id: string): Promise<AdminResult<ReturnType<typeof accountView>>> {
  const account = await store.accounts.get(id);
  return account === null ? notFound('account', id) : { ok: true, value: accountView(account) };
}

/**
 * Renames the account or changes its monthly quota, with the checks of `createAccount`. A new
 * quota holds for the current month at once: a raised one lets signals in again, a lowered one
 * below what was used refuses the next.
 */
export async function updateAccount(
  store: Store,
  id: string,
  body: unknown,
): Promise<AdminResult<ReturnType<typeof accountView>>> {
  const fields = new FieldReader(body, UPDATE_ACCOUNT_BODY);
  const patch: AccountPatch = {};
  const name = fields.string('name');
  if (typeof name === 'string') patch.name = name.trim();
  const quota = fields.integer('monthlySignalQuota');
  if (quota !== undefined) patch.monthlySignalQuota = quota;
  fields.rejectUnknown();
  if (fields.problems.length > 0) return refuse(...fields.problems);
  if (Object.keys(patch).length === 0) {
    return refuse({
      code: ErrorCode.INVALID_REQUEST,
      detail: 'the update changes nothing; send name, monthlySignalQuota or both',
    });
  }
  const updated = await store.accounts.update(id, patch);
  return updated === null ? notFound('account', id) : { ok: true, value: accountView(updated) };
}

export async function accountUsage(store: Store, accountId: string, nowMillis: number) {
  const period = periodOf(nowMillis);
  const usage = await store.usage.get(accountId, period);
  if (usage === null) return notFound<never>('account', accountId);
  return {
    ok: true as const,
    value: { period, used: usage.used, limit: usage.limit, resetsAt: periodEnd(period).toISOString() },
  };
}

/** `GET /api/admin/accounts`: a page of accounts, newest first. */
export async function listAccounts(store: Store, query: ListQuery) {
  const read = readListQuery(query, []);
  if (!read.ok) return read;
  const { limit, before } = read.value;
  if (before !== undefined && (await store.accounts.get(before)) === null)
    return refuse<never>(unknownCursor('account', before));
  const page = await store.accounts.list({ limit, ...(before !== undefined && { before }) });
  return { ok: true as const, value: { accounts: page.items.map(accountView), next: page.next } };
}

export const DEFAULT_USAGE_DAYS = 30;
export const MAX_USAGE_DAYS = 366;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * `GET /api/admin/accounts/{id}/usage/daily?days=30`: the signals the account's log holds per
 * UTC day, accepted and rejected apart, for the last `days` days up to today, every day listed
 * (0 when none). Accepted signals are the ones charged to the quota.
 */
export async function dailyUsage(store: Store, accountId: string, query: ListQuery, nowMillis: number) {
  const problems: Problem[] = [];
  const unknown = unknownNames(
    Object.keys(query).filter((name) => query[name] !== undefined),
    ['days'],
    'query parameter',
  );
  problems.push(...unknown);
  let days = DEFAULT_USAGE_DAYS;
  const given = query.days;
  if (given !== undefined) {
    days = Number(given);
    if (typeof given !== 'string' || !/^\d+$/.test(given) || days < 1 || days > MAX_USAGE_DAYS) {
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: 'days',
        detail: `days must be a whole number from 1 to ${MAX_USAGE_DAYS}`,
      });
    }
  }
  if (problems.length > 0) return refuse<never>(...problems);
  if ((await store.accounts.get(accountId)) === null) return notFound<never>('account', accountId);
  const today = Math.floor(nowMillis / DAY_MS) * DAY_MS;
  const dayOf = (millis: number) => new Date(millis).toISOString().slice(0, 10);
  const from = dayOf(today - (days - 1) * DAY_MS);
  const to = dayOf(today);
  const counted = new Map((await store.signals.countPerDay(accountId, from, to)).map((d) => [d.day, d]));
  const list = [];
  for (let i = days - 1; i >= 0; i -= 1) {
    const day = dayOf(today - i * DAY_MS);
    const count = counted.get(day);
    list.push({ date: day, accepted: count?.accepted ?? 0, rejected: count?.rejected ?? 0 });
  }
  return { ok: true as const, value: { accountId, from, to, days: list } };
}
