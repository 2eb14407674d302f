import type { NotificationEvent, OutboxMessage } from '../store/notifications.js';
import { EVENT_KINDS, isEventKind } from './event-catalog.js';

/** What a message says, before a channel puts it in its own format. */
export interface NotificationText {
  kind: string;
  /** One line: what happened, to what. */
  title: string;
  /** What happened in detail: the count of a digest and its first examples. */
  lines: string[];
  whatToDo: string;
  /** The signal, agent or source (or account) in the dashboard. */
  link: string;
  count: number;
  firstAt: string;
  lastAt: string;
}

const VIEW_OF = { signal: 'signals', agent: 'agents', source: 'sources', account: 'accounts', server: 'accounts' };

/** The dashboard address of what the event happened to. */
export function dashboardLink(dashboardUrl: string, event: NotificationEvent): string {
  const base = dashboardUrl.replace(/\/+$/, '');
  const view = VIEW_OF[event.subject.type];
  return event.subject.type === 'server' ? `${base}/` : `${base}/#${view}/${encodeURIComponent(event.subject.id)}`;
}

function subjectName(event: NotificationEvent): string {
  const { subject } = event;
  if (subject.type === 'server') return 'the server';
  return subject.name ? `${subject.type} “${subject.name}” (${subject.id})` : `${subject.type} ${subject.id}`;
}

/** One example's line: its time and its facts, in a fixed order. */
function exampleLine(event: NotificationEvent): string {
  const facts = Object.entries(event.detail)
    .filter(([, value]) => value !== null && value !== '')
    .map(([key, value]) => `${key}: ${String(value)}`);
  return `${event.at.slice(11, 19)} UTC — ${facts.join('; ')}`;
}

/**
 * Words a message: the event's title with what it happened to, the count when bursts were
 * digested (with the first few examples), what to do, and the dashboard link. Pure.
 */
export function notificationText(message: OutboxMessage, dashboardUrl: string): NotificationText {
  const first = message.examples[0]!;
  const kind = isEventKind(message.kind) ? EVENT_KINDS[message.kind] : null;
  const title = `${kind?.title ?? message.kind}: ${subjectName(first)}`;
  const lines: string[] = [];
  if (message.count > 1) {
    lines.push(
      `${message.count} times between ${message.firstAt.slice(11, 19)} and ${message.lastAt.slice(11, 19)} UTC on ${message.firstAt.slice(0, 10)}; the first ${message.examples.length}:`,
    );
  }
  for (const example of message.examples) lines.push(exampleLine(example));
  return {
    kind: message.kind,
    title,
    lines,
    whatToDo: kind?.whatToDo ?? '',
    link: dashboardLink(dashboardUrl, first),
    count: message.count,
    firstAt: message.firstAt,
    lastAt: message.lastAt,
  };
}
