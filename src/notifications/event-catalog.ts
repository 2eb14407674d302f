/**
 * Every event a notification can tell of: what happened (the title), what to do, whether a new
 * channel is told of it unless chosen otherwise, and whether bursts of it are digested (one
 * message per minute and subject, with counts and the first examples).
 */
export interface EventKind {
  title: string;
  whatToDo: string;
  defaultOn: boolean;
  digested: boolean;
}

export const EVENT_KINDS = {
  signal_refused: {
    title: 'Signal refused at the door',
    whatToDo: 'Check the sender: its key, signature, message text or the quota. The log shows each refusal.',
    defaultOn: true,
    digested: true,
  },
  delivery_rejected: {
    title: 'Delivery rejected by the agent',
    whatToDo: 'Read the agent’s reason in the signal log; fix the signal or the agent’s settings.',
    defaultOn: true,
    digested: true,
  },
  delivery_failed: {
    title: 'Delivery failed on the venue',
    whatToDo: 'Check the position on the venue, then the agent’s log: the order may not have been placed.',
    defaultOn: true,
    digested: true,
  },
  delivery_expired: {
    title: 'Signal expired before its agent took it',
    whatToDo: 'Start or reconnect the agent; the signal was not executed.',
    defaultOn: true,
    digested: true,
  },
  agent_disconnected: {
    title: 'Agent disconnected',
    whatToDo: 'Check the agent’s machine and network; signals wait for it until they expire.',
    defaultOn: true,
    digested: false,
  },
  agent_reconnected: {
    title: 'Agent back',
    whatToDo: 'Nothing; waiting signals are being handed to it.',
    defaultOn: true,
    digested: false,
  },
  venue_session_lost: {
    title: 'Venue session lost',
    whatToDo: 'The agent reconnects by itself; if it stays down, check the venue’s status and the credentials.',
    defaultOn: true,
    digested: true,
  },
  venue_logon_refused: {
    title: 'Venue logon refused',
    whatToDo: 'Check the agent’s venue credentials (password, API key) and that the account is enabled.',
    defaultOn: true,
    digested: true,
  },
  book_mismatch: {
    title: 'Agent’s book differs from the venue',
    whatToDo: 'Positions or orders on the venue are not managed by signalgate: close or adopt them on the venue.',
    defaultOn: true,
    digested: true,
  },
  position_unprotected: {
    title: 'Position without a stop',
    whatToDo: 'Set a stop on the venue now, or close the position.',
    defaultOn: true,
    digested: true,
  },
  risk_rule_hit: {
    title: 'Risk rule hit',
    whatToDo: 'Read the rule and the signal it stopped in the dashboard.',
    defaultOn: true,
    digested: true,
  },
  risk_halted: {
    title: 'Trading halted',
    whatToDo:
      'Signals are still received and logged as halted, and never executed later. Review what happened, then release the halt by hand in the dashboard, the CLI or the API.',
    defaultOn: true,
    digested: false,
  },
  risk_released: {
    title: 'Halt released',
    whatToDo: 'Nothing: signals received from now on are executed; those received while halted are not.',
    defaultOn: true,
    digested: false,
  },
  quota_80: {
    title: 'Quota 80 % used',
    whatToDo: 'Raise the account’s monthly quota before it runs out, or expect refusals.',
    defaultOn: true,
    digested: false,
  },
  quota_100: {
    title: 'Quota used up',
    whatToDo: 'Signals are refused until the month ends: raise the account’s monthly quota.',
    defaultOn: true,
    digested: false,
  },
  store_unavailable: {
    title: 'Store was unavailable',
    whatToDo: 'Signals were answered 503 meanwhile; check the database and the disk. Senders may need to resend.',
    defaultOn: true,
    digested: false,
  },
  tls_expiring: {
    title: 'TLS certificate expiring',
    whatToDo: 'Renew the certificate, replace the files and send SIGHUP to the server.',
    defaultOn: true,
    digested: false,
  },
  test: {
    title: 'Test message',
    whatToDo: 'Nothing: this channel works.',
    defaultOn: false,
    digested: false,
  },
} satisfies Record<string, EventKind>;

export type EventKindName = keyof typeof EVENT_KINDS;

/** The events a channel can choose (the test message is sent on request, never chosen). */
export const CHOOSABLE_EVENTS = (Object.keys(EVENT_KINDS) as EventKindName[]).filter((kind) => kind !== 'test');

export const DEFAULT_EVENTS = CHOOSABLE_EVENTS.filter((kind) => EVENT_KINDS[kind].defaultOn);

export function isEventKind(value: string): value is EventKindName {
  return Object.hasOwn(EVENT_KINDS, value);
}
