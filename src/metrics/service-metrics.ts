import { collectDefaultMetrics, Counter, Gauge, type Metric, Registry } from 'prom-client';
import type { Store } from '../store/store.js';
import { DeliveryMeter } from './delivery-meter.js';
import { INBOUND_DURATION_BUCKETS, InboundMeter } from './inbound-meter.js';

/** Wrong tokens by credential (`admin`, `metrics`, `dashboard_sign_in`): looked at, and refused unexamined. */
export interface WrongTokenTotals {
  wrong: ReadonlyMap<string, number>;
  refused: ReadonlyMap<string, number>;
}

/**
 * The metrics `GET /metrics` serves, one registry per service (so two services in one process,
 * as in tests, count apart). The hot paths only add to the meters' numbers; the metrics read
 * them, and ask the store for the queue depths, when scraped.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly inbound = new InboundMeter();
  readonly deliveries = new DeliveryMeter();
  /** Inbound requests with a key no source has, since the start: the HTTP edge's aggregated log counts them. */
  private wrongKeys: () => number = () => 0;
  /** Wrong admin and metrics tokens since the start, by credential: the HTTP edge counts them. */
  private wrongTokens: WrongTokenTotals = { wrong: new Map(), refused: new Map() };

  constructor(store: Store) {
    const { registry, inbound, deliveries } = this;
    collectDefaultMetrics({ register: registry });
    new Counter({
      name: 'signalgate_inbound_requests_total',
      help: 'Inbound signal requests answered, by HTTP status code.',
      labelNames: ['code'],
      registers: [registry],
      collect() {
        this.reset();
        inbound.byStatus.forEach((count, status) => {
          if (count > 0) this.inc({ code: String(status) }, count);
        });
      },
    });
    registry.registerMetric(inboundDurationHistogram(inbound));
    const wrongKeys = () => this.wrongKeys();
    new Counter({
      name: 'signalgate_inbound_wrong_keys_total',
      help: 'Inbound requests whose source key no source has (answered 401): logged per client address once a minute, never a line each.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(wrongKeys());
      },
    });
    const wrongTokens = () => this.wrongTokens;
    new Counter({
      name: 'signalgate_wrong_tokens_total',
      help: 'Wrong bearer tokens and dashboard sign-ins, by credential (admin, metrics, dashboard_sign_in) and outcome: wrong (looked at and refused, 401), refused (not looked at: the address sent too many, 429). Logged per client address once a minute.',
      labelNames: ['credential', 'outcome'],
      registers: [registry],
      collect() {
        this.reset();
        for (const outcome of ['wrong', 'refused'] as const) {
          for (const [credential, count] of wrongTokens()[outcome]) this.inc({ credential, outcome }, count);
        }
      },
    });
    new Counter({
      name: 'signalgate_deliveries_total',
      help: 'Deliveries by the status they reached in this process: delivered (handed to the agent), executed, rejected, failed (acknowledged), expired (past its deadline before it was handed out or acknowledged).',
      labelNames: ['status'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [status, count] of deliveries.byStatus) this.inc({ status }, count);
      },
    });
    new Gauge({
      name: 'signalgate_agent_queue_depth',
      help: "Each agent's deliveries not yet final (queued, or handed out and not acknowledged), from the store.",
      labelNames: ['agent'],
      registers: [registry],
      async collect() {
        const depths = await store.deliveries.countOpen();
        this.reset();
        for (const { agentId, open } of depths) this.set({ agent: agentId }, open);
      },
    });
    new Gauge({
      name: 'signalgate_agents_connected',
      help: 'Agents connected to this process: a WebSocket session open, or a poll in the last 35 s.',
      registers: [registry],
      collect() {
        this.set(deliveries.connectedAgents());
      },
    });
  }

  /** Where `signalgate_inbound_wrong_keys_total` is read from when scraped. */
  countWrongKeys(total: () => number): void {
    this.wrongKeys = total;
  }

  /** Where `signalgate_wrong_tokens_total` is read from when scraped. */
  countWrongTokens(totals: WrongTokenTotals): void {
    this.wrongTokens = totals;
  }

  /** The Prometheus text exposition and its content type. */
  async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}

/**
 * `signalgate_inbound_duration_seconds`, read from the inbound meter's buckets at scrape time:
 * prom-client's own `Histogram.observe` allocates on every call, which the inbound hot path
 * must not. This is the shape the registry reads from each metric (name, help, type, get()).
 */
function inboundDurationHistogram(meter: InboundMeter): Metric {
  const name = 'signalgate_inbound_duration_seconds';
  const histogram = {
    name,
    help: 'Time from an inbound request reaching the server to its answer being sent, in seconds.',
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
      let cumulative = 0;
      INBOUND_DURATION_BUCKETS.forEach((le, i) => {
        cumulative += meter.buckets[i]!;
        values.push({ metricName: `${name}_bucket`, labels: { le }, value: cumulative });
      });
      values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, value: meter.count });
      values.push({ metricName: `${name}_sum`, labels: {}, value: meter.durationSum });
      values.push({ metricName: `${name}_count`, labels: {}, value: meter.count });
      return { name, help: histogram.help, type: histogram.type, values, aggregator: histogram.aggregator };
    },
  };
  return histogram as unknown as Metric;
}
