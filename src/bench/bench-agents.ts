import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { AgentClient, type TransportChoice } from '../agent/agent-client.js';

/**
 * The agents of the burst and soak scenarios, in a process of their own so their work never
 * delays the sender's schedule: one AgentClient per token on one transport, each taking its
 * signals and acknowledging them at once. Prints `{"ready":N}` once every client is connected
 * on the transport, then `{"held":N}` every 250 ms; on SIGTERM writes `{signalId: epoch ms the client handed it over}` to the
 * results file and exits. `node dist/bench/bench-agents.js CONFIG.json`, where the config is
 * `{ servers, tokens, transport, resultsFile }`.
 */
interface Config {
  /** Agent i connects to servers[i % servers.length]. */
  servers: string[];
  tokens: string[];
  transport: Exclude<TransportChoice, 'auto'>;
  resultsFile: string;
}

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Config;
const arrivals: Record<string, number> = {};
let acked = 0;
let ackFailures = 0;
const clients = config.tokens.map(
  (token, i) => new AgentClient({ server: config.servers[i % config.servers.length]!, token, transport: config.transport }),
);
const consumers = clients.map(async (client) => {
  for await (const signal of client.signals()) {
    // One clock for every process on the machine: the epoch, to the microsecond.
    arrivals[signal.id] ??= performance.timeOrigin + performance.now();
    try {
      await client.ack(signal.id, { status: 'executed' });
      acked++;
    } catch {
      ackFailures++;
    }
  }
});

const ready = setInterval(() => {
  if (clients.every((client) => client.transport === config.transport)) {
    clearInterval(ready);
    process.stdout.write(`${JSON.stringify({ ready: clients.length })}\n`);
    setInterval(() => process.stdout.write(`${JSON.stringify({ held: Object.keys(arrivals).length })}\n`), 250).unref();
  }
}, 20);

process.on('SIGTERM', () => {
  writeFileSync(config.resultsFile, JSON.stringify({ arrivals, acked, ackFailures }));
  void Promise.all(clients.map((client) => client.close()))
    .then(() => Promise.race([Promise.allSettled(consumers), new Promise((resolve) => setTimeout(resolve, 2000))]))
    .finally(() => process.exit(0));
});
