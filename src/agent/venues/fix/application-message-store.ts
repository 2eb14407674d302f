import './jspurefix-prelude.js';
import jspurefix from 'jspurefix';
import type { IFixMsgStoreRecord, IFixSessionStore, IFixSessionStoreFactory, SessionId } from 'jspurefix';
import { writeFileAtomicSync } from '../../../files/atomic-file.js';

/**
 * Session-level message types (Heartbeat, TestRequest, ResendRequest, Reject, SequenceReset,
 * Logout, Logon): never resent — a ResendRequest covering them is answered with a gap fill.
 */
export const ADMIN_TYPES: ReadonlySet<string> = new Set(['0', '1', '2', '3', '4', '5', 'A']);

/**
 * jspurefix's file store (sequence numbers and sent messages on disk, so both survive a restart)
 * keeping application messages only: the Logon carries the broker password (554), which must
 * never reach disk, and no admin message is ever resent.
 */
class ApplicationMessageFileStore extends jspurefix.FileSessionStore {
  override async put(record: IFixMsgStoreRecord): Promise<void> {
    if (ADMIN_TYPES.has(record.msgType)) return;
    await super.put(record);
  }
}

/**
 * Sequence numbers written at once, whole and synced (writeFileAtomicSync): jspurefix writes
 * them asynchronously, so two writes in flight could land out of order, and a write cut by a
 * kill or a power loss could leave the file empty (the next logon numbered from 1: too low,
 * refused).
 */
export class SyncSeqNumStreamProvider extends jspurefix.FileSessionStreamProvider {
  private readonly seqNumsFile: string;

  constructor(sessionId: SessionId, directory: string) {
    super(sessionId, directory);
    this.seqNumsFile = sessionId.getFilePath(directory, 'seqnums');
  }

  override async writeSeqNums(content: string): Promise<void> {
    writeFileAtomicSync(this.seqNumsFile, content);
  }
}

/** The store factory a FIX session uses: application messages and sequence numbers under `directory`. */
export class ApplicationMessageStoreFactory implements IFixSessionStoreFactory {
  constructor(private readonly directory: string) {}

  create(sessionId: SessionId): IFixSessionStore {
    return new ApplicationMessageFileStore(sessionId, new SyncSeqNumStreamProvider(sessionId, this.directory), true);
  }
}
