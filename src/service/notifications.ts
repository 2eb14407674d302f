import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type Config, DEFAULT_NOTIFICATION_SETTINGS } from '../config/config.js';
import type { TlsCredentials } from '../http/tls-credentials.js';
import type { TransportOptions } from '../notifications/channel-transports.js';
import { startNotificationSender } from '../notifications/notification-sender.js';
import { Notifier } from '../notifications/notifier.js';
import { DEFAULT_TRANSPORT } from '../notifications/transport-defaults.js';
import { WatchLease } from '../notifications/watch-lease.js';
import { repeatEvery } from '../process/repeat-every.js';
import type { Store } from '../store/store.js';

/** A certificate this close to its end is reported (once a day while it is). */
const TLS_WARNING_MS = 14 * 86_400_000;
/** How often the store's reachability and the certificate are looked at. */
const WATCH_INTERVAL_MS = 15_000;
/** Sent and abandoned messages are kept this long (the dashboard's list of a channel's messages). */
const KEEP_SENT_MS = 7 * 86_400_000;

export interface RunningNotifications {
  notifier: Notifier;
  transport: TransportOptions;
  agentOfflineMs: number;
  /** Whether this instance is the one watching agents' presence, the store and the certificate. */
  watching: () => boolean;
  /** A certificate now served (at start and on SIGHUP): reported when it ends within 14 days. */
  certificate(tls: TlsCredentials): void;
  stop(): Promise<void>;
}

/**
 * The server's notifications: the notifier events are told to, the sender that empties the
 * outbox, and the watches of what only the server itself knows (the store gone and back, the
 * TLS certificate's end). Of several instances on one database, only the holder of the watch
 * lease tells those (and agents' presence), so each is told once.
 */
export function startNotifications(
  store: Store,
  logger: Logger,
  config: Config,
  tls: TlsCredentials | null,
): RunningNotifications {
  const settings = config.notifications ?? DEFAULT_NOTIFICATION_SETTINGS;
  const transport: TransportOptions = { ...DEFAULT_TRANSPORT, telegramApiUrl: settings.telegramApiUrl };
  const owner = randomUUID();
  const lease = new WatchLease(store, owner);
  const sender = startNotificationSender(store, logger, {
    owner,
    dashboardUrl: config.publicUrl,
    transport,
    perChannelPerMinute: settings.perChannelPerMinute,
    ...(settings.retry && { retry: settings.retry }),
  });
  const notifier = new Notifier(store, logger, () => sender.wake());

  let certificate = tls;
  let certificateToldOn = '';
  const checkCertificate = () => {
    if (certificate === null || !lease.held()) return;
    const validTo = Date.parse(certificate.summary.validTo);
    const today = new Date().toISOString().slice(0, 10);
    if (validTo - Date.now() > TLS_WARNING_MS || certificateToldOn === today) return;
    certificateToldOn = today;
    notifier.tell(null, {
      kind: 'tls_expiring',
      subject: { type: 'server', id: 'tls' },
      detail: {
        certificate: certificate.summary.subject,
        validTo: certificate.summary.validTo,
        daysLeft: Math.max(0, Math.floor((validTo - Date.now()) / 86_400_000)),
      },
    });
  };

  // The store cannot take the event while it is gone: it is told once the store is back.
  let unavailableSince: number | null = null;
  let lastPrune = 0;
  const watch = repeatEvery(
    WATCH_INTERVAL_MS,
    async () => {
      const problem = await store.reachabilityProblem().catch((error: unknown) => String(error));
      if (problem !== null) {
        unavailableSince ??= Date.now();
        return;
      }
      // Every instance saw the outage; the watcher tells it (the lease is renewed first, as the
      // store is back).
      const watching = await lease.renew();
      if (unavailableSince !== null) {
        const from = unavailableSince;
        unavailableSince = null;
        if (watching)
          notifier.tell(null, {
            kind: 'store_unavailable',
            subject: { type: 'server', id: 'store' },
            detail: {
              from: new Date(from).toISOString(),
              to: new Date().toISOString(),
              seconds: Math.round((Date.now() - from) / 1000),
            },
          });
      }
      checkCertificate();
      if (watching && Date.now() - lastPrune > 3_600_000) {
        lastPrune = Date.now();
        await store.notifications.prune(new Date(Date.now() - KEEP_SENT_MS).toISOString());
      }
    },
    (err) => logger.warn({ err }, 'notifications: a watch round failed'),
  );

  return {
    notifier,
    transport,
    agentOfflineMs: settings.agentOfflineMs,
    watching: () => lease.held(),
    certificate: (fresh) => {
      certificate = fresh;
      certificateToldOn = '';
      checkCertificate();
    },
    stop: async () => {
      await watch.stop();
      await lease.release();
      await notifier.close();
      await sender.stop();
    },
  };
}
