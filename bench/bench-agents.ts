import { readFileSync, writeFileSync } from 'node:fs';
import type { BenchAgentEvents, Carrier } from './bench-agent.js';
import { BenchPollAgent } from './bench-poll-agent.js';
import { BenchPushAgent } from './bench-push-agent.js';
import { now } from './raw-http-connection.js';

/**
 * The agents of the burst and soak scenarios, in a process of their own so their work never
 * delays the sender's schedule: one agent per token on one transport (`BenchPushAgent` by
 * WebSocket, `BenchPollAgent` by long-poll), each taking its signals in order and acknowledging
 * each at once without waiting for the acks before it, as the agent (`ExecutingAgent`) does. Prints `{"ready":N}` once every agent
 * is connected on the transport, then `{"held":N,"acked":N,"ackFailures":N}` every 250 ms; on SIGTERM writes
 * `{signalId: epoch ms the agent took it}` and the message that brought each (`Carrier`) to the
 * results file and exits.
 * `node --import ./bench/run-typescript.mjs bench/bench-agents.ts CONFIG.json`, where the config is
 * `{ servers, tokens, transport, resultsFile }`.
 */
interface Config {
  /** Agent i connects to servers[i % servers.length]. */
  servers: string[];
  tokens: string[];
  transport: 'websocket' | 'long-poll';
  resultsFile: string;
}

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Config;
const arrivals: Record<string, number> = {};
const carriers: Record<string, Carrier> = {};
let held = 0;
let acked = 0;
let ackFailures = 0;
let ready = 0;
const events: BenchAgentEvents = {
  held(id, carrier) {
    // One clock for every process on the machine: the epoch, to the microsecond.
    arrivals[id] = now();
    carriers[id] = carrier;
    held++;
  },
  acked(ok) {
    if (ok) acked++;
    else ackFailures++;
  },
  ready() {
    if (++ready < config.tokens.length) return;
    process.stdout.write(`${JSON.stringify({ ready })}\n`);
    setInterval(() => process.stdout.write(`${JSON.stringify({ held, acked, ackFailures })}\n`), 250).unref();
  },
};
const agents = config.tokens.map((token, i) => {
  const server = config.servers[i % config.servers.length]!;
  return config.transport === 'websocket'
    ? new BenchPushAgent(server, token, events)
    : new BenchPollAgent(new URL(server), token, events);
});

process.on('SIGTERM', () => {
  writeFileSync(config.resultsFile, JSON.stringify({ arrivals, carriers, acked, ackFailures }));
  for (const agent of agents) agent.close();
  process.exit(0);
});
