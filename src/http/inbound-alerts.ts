import type { InboundAlert } from '../inbound/inbound-answer.js';
import type { Notifier } from '../notifications/notifier.js';

/** Tells the account's notifications of a refusal at the door or a quota threshold reached. */
export function tellInboundAlert(notifier: Notifier): (alert: InboundAlert) => void {
  return (alert) => {
    if (alert.kind === 'refused') {
      notifier.tell(alert.accountId, {
        kind: 'signal_refused',
        subject: { type: 'source', id: alert.sourceId },
        detail: { signal: alert.signalId, code: alert.code, problem: alert.detail },
      });
      return;
    }
    notifier.tell(alert.accountId, {
      kind: alert.percent === 100 ? 'quota_100' : 'quota_80',
      subject: { type: 'account', id: alert.accountId },
      detail: { used: alert.used, limit: alert.limit, month: alert.period },
    });
  };
}
