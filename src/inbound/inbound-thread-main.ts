import { parentPort, workerData } from 'node:worker_threads';
import { answerInbound } from './answer-inbound.js';
import type { InboundRequest } from './inbound-request.js';
import { OutcomeUnknownError } from '../store/outcome-unknown.js';
import { isStoreUnavailable } from '../store/store-unavailable.js';
import type { FromInboundThread, InboundThreadData, ToInboundThread } from './inbound-thread-protocol.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';

/**
 * The inbound thread: with a connection of its own to the embedded store, it runs the checks
 * from the key on, the group commit and the WAL sync of every inbound request, so the
 * event-loop thread only reads requests and writes answers. Answers go back once per turn of
 * this thread's loop, together with the agents whose new deliveries were committed since.
 */
const port = parentPort!;
const { dataDir } = workerData as InboundThreadData;
// This thread commits the inbound signals, so its commits run the checkpoints (SQLite's own, at
// 1,000 pages): nothing else would while signals arrive and no agent writes.
const store = openSqliteStore({ dataDir });

type Answers = Extract<FromInboundThread, { kind: 'answers' }>['items'];
let answers: Answers = [];
let agentIds = new Set<string>();
let flushing: NodeJS.Immediate | null = null;
let inFlight = 0;
let closing = false;

store.deliveries.watch((ids) => {
  for (const id of ids) agentIds.add(id);
  scheduleFlush();
});

function post(message: FromInboundThread): void {
  port.postMessage(message);
}

function scheduleFlush(): void {
  flushing ??= setImmediate(flush);
}

function flush(): void {
  flushing = null;
  if (answers.length > 0 || agentIds.size > 0) {
    post({ kind: 'answers', items: answers, agentIds: [...agentIds] });
    answers = [];
    agentIds = new Set();
  }
  if (closing && inFlight === 0) void finish();
}

/** Commits and syncs what is left, then lets the thread end. */
async function finish(): Promise<void> {
  await store.close();
  port.close();
}

function receive(n: number, request: InboundRequest): void {
  inFlight++;
  answerInbound(store, request)
    .then(
      (answer) => answers.push({ n, answer }),
      (error: unknown) => {
        // For an unknown outcome the cause travels: the event loop wraps it again, once.
        const outcomeUnknown = error instanceof OutcomeUnknownError;
        const reported = outcomeUnknown ? error.cause : error;
        answers.push({
          n,
          error: reported instanceof Error ? (reported.stack ?? reported.message) : String(reported),
          outcomeUnknown,
          unavailable: !outcomeUnknown && isStoreUnavailable(error),
        });
      },
    )
    .finally(() => {
      inFlight--;
      scheduleFlush();
    });
}

port.on('message', (message: ToInboundThread) => {
  if (message.kind === 'requests') {
    for (const { n, request } of message.items) receive(n, request);
  } else {
    closing = true;
    if (inFlight === 0 && flushing === null) void finish();
  }
});

post({ kind: 'ready' });
