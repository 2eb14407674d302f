import '../../src/agent/venues/fix/jspurefix-prelude.js';
import jspurefix from 'jspurefix';
import { ADMIN_TYPES } from '../../src/agent/venues/fix/application-message-store.js';
import type { IFixMsgStore, IFixSessionStoreFactory, IJsFixConfig, MsgView } from 'jspurefix';

export type FixFields = Record<string, unknown>;

/** A counterparty's side of one session: what it sends back. */
export interface AcceptorSession {
  push(type: string, body: FixFields): void;
}

/**
 * What a counterparty does on its sessions. jspurefix constructs the session classes itself,
 * so they reach the counterparty through these.
 */
export interface AcceptorHandlers {
  /** An application message from the agent (not a session-level one). */
  message(session: AcceptorSession, type: string, body: FixFields): void;
  /** Whether the Logon's username (553) and password (554) are accepted. */
  logon(user: string, password: string): boolean;
  ready?(session: AcceptorSession): void;
  stopped?(session: AcceptorSession): void;
  /** A session-level message from the agent (a TestRequest, 1, say), before the acceptor answers it. */
  sessionMessage?(session: AcceptorSession, type: string): void;
  /** Whether Heartbeats (0) go out, the answers to TestRequests among them; without it, always. */
  heartbeats?(): boolean;
}

export interface AcceptorOptions {
  /** For jspurefix's session naming only. */
  name: string;
  port: number;
  /** `qf44`, or the path of a dictionary file. */
  dictionary: string;
  senderCompId: string;
  targetCompId: string;
  /** SenderSubID and TargetSubID (cTrader's QUOTE or TRADE); empty: none. */
  subId: string;
  /**
   * Without one, sequence numbers start at 1 on each Logon. With one, they run on across
   * connections and a resend request is answered from it (see `AcceptorJournal`).
   */
  journal?: AcceptorJournal;
  /** The HeartBtInt of the acceptor's Logon (default 30): the agent sends a TestRequest after 1.5 times it without a word. */
  heartbeatSeconds?: number;
}

/** A broker's message store kept across the sessions of one acceptor (the counterparty's lifetime). */
export interface AcceptorJournal {
  /** Sequence numbers, both ways. */
  readonly sessionStore: IFixSessionStoreFactory;
  /** The application messages sent, by sequence number: what a resend request replays (PossDup). */
  readonly messages: IFixMsgStore;
  /** Resend requests answered by a gap fill only, as a broker that replays no business message. */
  readonly gapFillOnly: () => boolean;
  /** A message encoded with its sequence number (to journal it), or not sent at all (`seqNum` null). */
  sent(type: string, body: FixFields, seqNum: number | null): void;
}

/**
 * Listens on 127.0.0.1:`port` as the acceptor of one FIX 4.4 session with jspurefix (sequence
 * numbers reset at each Logon, its own logging silenced), answering as `handlers` say. Stop it
 * with the returned `stop()`.
 */
export function launchFixAcceptor(options: AcceptorOptions, handlers: AcceptorHandlers): { stop(): void } {
  const description = {
    application: {
      type: 'acceptor',
      name: options.name,
      reconnectSeconds: 0,
      tcp: { host: '127.0.0.1', port: options.port },
      protocol: 'ascii',
      dictionary: options.dictionary,
    },
    Name: options.subId,
    Username: '',
    Password: '',
    SenderCompId: options.senderCompId,
    TargetCompID: options.targetCompId,
    SenderSubID: options.subId,
    TargetSubID: options.subId,
    ResetSeqNumFlag: options.journal === undefined,
    HeartBtInt: options.heartbeatSeconds ?? 30,
    BeginString: 'FIX.4.4',
  };
  const quiet = { info: () => undefined, warning: () => undefined, debug: () => undefined, error: () => undefined };
  class Logs extends jspurefix.JsFixLoggerFactory {
    logger() {
      return quiet;
    }
    plain() {
      return quiet;
    }
  }
  const journal = options.journal;
  class Session extends jspurefix.AsciiSession {
    constructor(config: IJsFixConfig) {
      super(config);
      if (journal) {
        this.store = journal.messages;
        const replay = new jspurefix.FixMsgAsciiStoreResend(journal.messages, config);
        const gapFill = new jspurefix.FixMsgAsciiStoreResend(
          new jspurefix.FixMsgMemoryStore(options.name, config),
          config,
        );
        this.resender = {
          getResendRequest: (begin: number, end: number) =>
            (journal.gapFillOnly() ? gapFill : replay).getResendRequest(begin, end),
        } as jspurefix.FixMsgAsciiStoreResend;
      }
    }
    push(type: string, body: FixFields): void {
      if (!journal) return this.send(type, body);
      this.send(type, body, (error, sent) =>
        journal.sent(type, body, error ? null : Number((sent.header as FixFields | null)?.MsgSeqNum)),
      );
    }
    protected override send(...args: Parameters<jspurefix.AsciiSession['send']>): void {
      if (args[0] === '0' && handlers.heartbeats?.() === false) return;
      super.send(...args);
    }
    protected override onMsg(msgType: string, view: MsgView): void {
      if (ADMIN_TYPES.has(msgType)) handlers.sessionMessage?.(this, msgType);
      super.onMsg(msgType, view);
    }
    protected onApplicationMsg(msgType: string, view: MsgView): void {
      handlers.message(this, msgType, view.toObject() as FixFields);
    }
    protected onReady(): void {
      handlers.ready?.(this);
    }
    protected onStopped(): void {
      handlers.stopped?.(this);
    }
    protected onLogon(_view: MsgView, user: string, password: string): boolean {
      return handlers.logon(user, password);
    }
    protected onEncoded(): void {}
    protected onDecoded(): void {}
  }
  class Launcher extends jspurefix.SessionLauncher {
    constructor() {
      super(null, description as never, new Logs());
    }
    protected override makeFactory() {
      return {
        makeSession: (config: IJsFixConfig) => {
          if (journal) config.sessionStoreFactory = journal.sessionStore;
          return new Session(config);
        },
      };
    }
  }
  const launcher = new Launcher();
  void launcher.run().catch(() => undefined);
  return launcher;
}
