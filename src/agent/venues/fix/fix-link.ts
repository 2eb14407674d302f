import './jspurefix-prelude.js';
import { mkdirSync } from 'node:fs';
import jspurefix from 'jspurefix';
import type {
  IJsFixConfig,
  IJsFixLogger,
  ILooseObject,
  ISessionDescription,
  JsFixLogFields,
  MsgTransport,
  MsgView,
} from 'jspurefix';
import type { Logger } from 'pino';
import { Backoff, sleep } from '../../backoff.js';
import { ApplicationMessageStoreFactory } from './application-message-store.js';
import type { FixCredentials, FixSessionConfig } from './fix-config.js';

/** A FIX message as jspurefix decodes it against the FIX 4.4 dictionary: fields by name. */
export type FixMessage = Record<string, unknown>;

/** What the link tells its owner. */
export interface FixLinkListener {
  /** An application message, or a session-level Reject (35=3) of one of ours. */
  received(msgType: string, message: FixMessage): void;
  /** The session is logged on (again): requests may be sent. */
  loggedOn(): void;
  /** The session is gone (connection lost, logout, refused logon): `reason` says why. */
  lost(reason: string): void;
}

/** jspurefix's own lines: session events at info (resend, gap fill, logon…), the rest at debug; never the password. */
class PinoFixLogs extends jspurefix.JsFixLoggerFactory {
  constructor(
    private readonly log: Logger,
    /** Resends, gap fills, sequence resets and rejects, for the published state. */
    private readonly sessionEvent: (text: string) => void,
  ) {
    super();
  }

  logger(type: string, context?: JsFixLogFields): IJsFixLogger {
    const log = this.log;
    const fields = { fix: type, ...(context?.component !== undefined && { fixComponent: context.component }) };
    const event =
      /resend|sequence reset|gap|logon|logout|test ?request|reject|disconnect|connect|heartbeat timer|peer|seq/i;
    return {
      info: (message) => {
        const text = redact(message);
        if (/^\[\d+\]|^0: Heartbeat/.test(text) || !event.test(text)) log.debug(fields, text);
        else log.info(fields, text);
        if (STATE_EVENT.test(text)) this.sessionEvent(text);
      },
      warning: (message) => log.warn(fields, redact(message)),
      debug: (message) => log.debug(fields, redact(message)),
      error: (error) => log.error({ ...fields, err: redact(error.message) }, 'FIX engine error'),
    };
  }

  plain(): IJsFixLogger {
    return { info: () => undefined, warning: () => undefined, debug: () => undefined, error: () => undefined };
  }
}

/** jspurefix's lines worth a place in the published state: the sequence number repairs and refusals. */
const STATE_EVENT = /resend|gap ?fill|sequence ?reset|seqreset|reject|too low|too high/i;
/** How many session events the published state keeps per session. */
const KEPT_EVENTS = 20;

/** FIX's field delimiter (SOH); jspurefix's log lines show it as | or ^. */
const SOH = String.fromCharCode(1);
const PASSWORD = new RegExp(`(^|[${SOH}|^])554=[^${SOH}|^]*`, 'g');
const SEQ_NUM = new RegExp(`(?:^|[${SOH}|])34=(\\d+)`);
const tagValue = (tag: number) => new RegExp(`(?:^|[${SOH}|])${tag}=([^${SOH}|]+)`);
const CL_ORD_ID = tagValue(11);
/** The field that names each request we send (ClOrdID, PosReqID, MassStatusReqID, MDReqID): a session Reject names only its sequence number. */
const REQUEST_KEY: Record<string, RegExp> = {
  D: CL_ORD_ID,
  F: CL_ORD_ID,
  H: CL_ORD_ID,
  AN: tagValue(710),
  AF: tagValue(584),
  V: tagValue(262),
};

/** The logon password (554) never reaches a log line. */
export function redact(text: string): string {
  return text.replace(PASSWORD, '$1554=***');
}

/**
 * One FIX session (the trade or the quote session) on jspurefix: logs on, keeps heartbeats,
 * test requests, sequence numbers (in `storeDir`, so they survive a restart), resend requests
 * and gap fills as jspurefix does them; reconnects with backoff whenever the session is lost,
 * until `stop()` logs out.
 */
export class FixLink {
  private session: LinkSession | null = null;
  private launcher: { stop(): void } | null = null;
  private readonly stopping = new AbortController();
  private running: Promise<void> | null = null;
  private waiters: Array<() => void> = [];
  /** Our outbound sequence number → the id of the request it carried: a session Reject names only the former. */
  private readonly sentOrders = new Map<number, string>();
  lastError: string | null = 'not logged on yet';
  /** The latest session events (logon, logout, lost, resend, gap fill, sequence reset, reject), oldest first. */
  readonly events: { at: string; event: string }[] = [];

  constructor(
    readonly name: 'trade' | 'quote',
    private readonly config: FixSessionConfig,
    private readonly credentials: FixCredentials | null,
    private readonly storeDir: string,
    private readonly log: Logger,
    private readonly listener: FixLinkListener,
    /** jspurefix's name of a dictionary or the absolute path of one (the dialect's). */
    private readonly dictionary = 'qf44',
  ) {}

  get loggedOn(): boolean {
    return this.session !== null;
  }

  start(): void {
    if (this.running) return;
    mkdirSync(this.storeDir, { recursive: true, mode: 0o700 });
    this.running = this.loop();
  }

  /** Resolves true once logged on, false after `timeoutMs`. */
  async ready(timeoutMs: number): Promise<boolean> {
    if (this.session) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve(false);
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(done);
    });
  }

  /** Sends an application message; false when the session is not logged on. */
  send(msgType: string, body: FixMessage): boolean {
    const session = this.session;
    if (!session) return false;
    session.sendApplication(msgType, body);
    return true;
  }

  /** The id of the request (ClOrdID, PosReqID, MassStatusReqID) our message `seq` carried. */
  orderOfSeq(seq: number): string | undefined {
    return this.sentOrders.get(seq);
  }

  /** Logs out (waiting briefly for the broker's Logout) and stops reconnecting. */
  async stop(): Promise<void> {
    this.stopping.abort();
    const session = this.session;
    if (session) {
      this.log.info({ fix: this.name }, 'FIX logout');
      this.note('logout');
      session.logout();
    }
    this.launcher?.stop();
    await Promise.race([this.running ?? Promise.resolve(), sleep(3000)]);
  }

  private async loop(): Promise<void> {
    const backoff = new Backoff(1000, 30_000);
    const abort = this.stopping.signal;
    while (!abort.aborted) {
      const started = Date.now();
      try {
        await this.connectOnce();
      } catch (error) {
        this.lastError = `FIX ${this.name} session ${this.config.host}:${this.config.port}: ${(error as Error).message}`;
      }
      if (this.session) this.dropped(this.lastError ?? 'the session ended');
      if (abort.aborted) break;
      if (Date.now() - started > 60_000) backoff.reset();
      const delay = backoff.next();
      this.log.warn({ fix: this.name, reason: this.lastError, retryInMs: delay }, 'FIX session down; reconnecting');
      this.note(`reconnecting in ${delay} ms`);
      await sleep(delay, abort);
    }
  }

  private async connectOnce(): Promise<void> {
    this.log.info(
      {
        fix: this.name,
        host: this.config.host,
        port: this.config.port,
        tls: this.config.tls,
        senderCompId: this.config.senderCompId,
        targetCompId: this.config.targetCompId,
      },
      'FIX connecting',
    );
    const storeFactory = new ApplicationMessageStoreFactory(this.storeDir);
    const launcher = new LinkLauncher(
      this.description(),
      new PinoFixLogs(this.log.child({ fixSession: this.name }), (text) => this.note(text)),
      (config) => {
        // Our store, not the description's: it never writes the Logon (and its password) to disk.
        config.sessionStoreFactory = storeFactory;
        return new LinkSession(config, this);
      },
    );
    this.launcher = launcher;
    await launcher.run();
  }

  private description(): ISessionDescription {
    const c = this.config;
    return {
      application: {
        type: 'initiator',
        name: `signalgate-${this.name}`,
        // One attempt per call: jspurefix would otherwise retry on its own every
        // `reconnectSeconds` until `connectTimeoutSeconds`, in a tight loop at 0. The delays
        // between attempts are this link's backoff (`loop`).
        reconnectSeconds: 3600,
        connectTimeoutSeconds: 0,
        tcp: { host: c.host, port: c.port, ...(c.tls && { tls: { rejectUnauthorized: true, timeout: 10_000 } }) },
        protocol: 'ascii',
        dictionary: this.dictionary,
      },
      Name: this.name,
      Username: this.credentials?.username ?? '',
      Password: this.credentials?.password ?? '',
      SenderCompId: c.senderCompId,
      TargetCompID: c.targetCompId,
      SenderSubID: c.senderSubId ?? '',
      TargetSubID: c.targetSubId ?? '',
      ResetSeqNumFlag: c.resetOnLogon,
      HeartBtInt: c.heartbeatSeconds,
      BeginString: 'FIX.4.4',
      store: { type: 'file', directory: this.storeDir },
    } as unknown as ISessionDescription;
  }

  /** @internal the session calls these. */
  sessionReady(session: LinkSession): void {
    this.session = session;
    this.lastError = null;
    this.log.info({ fix: this.name }, 'FIX logged on');
    this.note('logged on');
    for (const wake of this.waiters.splice(0)) wake();
    this.listener.loggedOn();
  }

  sessionStopped(error?: Error): void {
    if (error) this.lastError = `FIX ${this.name} session: ${redact(error.message)}`;
    else this.lastError ??= `FIX ${this.name} session logged out`;
    if (this.session) this.dropped(this.lastError);
  }

  sessionEncoded(msgType: string, text: string): void {
    const key = REQUEST_KEY[msgType];
    if (key === undefined) return;
    const seq = SEQ_NUM.exec(text)?.[1];
    const id = key.exec(text)?.[1];
    if (seq && id) this.sentOrders.set(Number(seq), id);
  }

  sessionReceived(msgType: string, message: FixMessage): void {
    this.listener.received(msgType, message);
  }

  private note(event: string): void {
    this.events.push({ at: new Date().toISOString(), event: redact(event) });
    if (this.events.length > KEPT_EVENTS) this.events.splice(0, this.events.length - KEPT_EVENTS);
  }

  private dropped(reason: string): void {
    this.session = null;
    this.log.warn({ fix: this.name, reason }, 'FIX session lost');
    this.note(`lost: ${reason}`);
    this.listener.lost(reason);
  }
}

/** Starts one initiator session: a fresh one per connection, since jspurefix's launcher runs one session to its end. */
class LinkLauncher extends jspurefix.SessionLauncher {
  constructor(
    description: ISessionDescription,
    logs: PinoFixLogs,
    private readonly make: (config: IJsFixConfig) => LinkSession,
  ) {
    super(description, null, logs);
  }

  protected override makeFactory(): { makeSession: (config: IJsFixConfig) => LinkSession } {
    return { makeSession: (config: IJsFixConfig) => this.make(config) };
  }
}

/** jspurefix's session with its callbacks handed to the link. */
class LinkSession extends jspurefix.AsciiSession {
  constructor(
    config: IJsFixConfig,
    private readonly link: FixLink,
  ) {
    super(config);
  }

  /**
   * Each message's sequence number is on disk before the message leaves (jspurefix writes it
   * after): an agent killed just after sending would otherwise log on again with the number the
   * broker already has, which FIX refuses (too low) for good.
   */
  override run(transport: MsgTransport): Promise<number> {
    const transmitter = transport.transmitter;
    const encode = transmitter.encodeMessage.bind(transmitter);
    transmitter.encodeMessage = (msgType: string, obj: ILooseObject) => {
      const header = encode(msgType, obj);
      const seqNum = Number(header?.MsgSeqNum);
      if (header && !header.PossDupFlag && Number.isInteger(seqNum)) void this.sessionStore.setSenderSeqNum(seqNum + 1);
      return header;
    };
    return super.run(transport);
  }

  sendApplication(msgType: string, body: FixMessage): void {
    this.send(msgType, body);
  }

  logout(): void {
    this.done();
  }

  /**
   * jspurefix ends the session when a business message arrives while it answers the broker's
   * ResendRequest or waits for the Heartbeat its TestRequest asked for. Both cross on the wire in
   * normal trading (the broker sent its ExecutionReport before it read ours), the message has
   * passed the sequence check, and dropping the session for it loses a logon and a resend.
   * Before logon the refusal stands.
   */
  protected override validStateApplicationMsg(): boolean {
    switch (this.sessionState.state) {
      case jspurefix.SessionState.HandleResendRequest:
      case jspurefix.SessionState.AwaitingProcessingResponseToTestRequest:
        return true;
      default:
        return super.validStateApplicationMsg();
    }
  }

  protected override onMsg(msgType: string, view: MsgView): void {
    // A session-level Reject of an order (a value the broker cannot take) is its answer.
    if (msgType === '3') this.link.sessionReceived(msgType, view.toObject() as FixMessage);
    super.onMsg(msgType, view);
  }

  protected onApplicationMsg(msgType: string, view: MsgView): void {
    this.link.sessionReceived(msgType, view.toObject() as FixMessage);
  }

  protected onReady(): void {
    this.link.sessionReady(this);
  }

  protected onStopped(error?: Error): void {
    this.link.sessionStopped(error);
  }

  protected onLogon(): boolean {
    return true;
  }

  protected onEncoded(msgType: string, text: string): void {
    this.link.sessionEncoded(msgType, text);
  }

  protected onDecoded(): void {}
}
