// Signals per day as bars (uPlot, served by signalgate itself).
import uPlot from './vendor/uplot/uPlot.esm.js';
import { h } from './dom.js';

const bars = uPlot.paths.bars({ size: [0.7, 28], align: 0 });

/**
 * `days`: [{date: 'YYYY-MM-DD', accepted, rejected}], oldest first. Drawn as one bar per day:
 * everything received, with the accepted part drawn over it, so the rejected part shows on top.
 */
export function dailyChart(days, label) {
  const box = h('figure', { class: 'chart' }, h('figcaption', null, label));
  const xs = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
  const total = days.map((d) => d.accepted + d.rejected);
  const accepted = days.map((d) => d.accepted);
  const summary = h(
    'p',
    { class: 'visually-hidden' },
    `${total.reduce((a, b) => a + b, 0)} signals over ${days.length} days.`,
  );
  box.append(summary);
  let plot = null;
  const draw = () => {
    const width = Math.max(240, box.clientWidth - 8);
    if (plot) return plot.setSize({ width, height: 170 });
    plot = new uPlot(
      {
        width,
        height: 170,
        legend: { show: true, live: false },
        cursor: { drag: { x: false, y: false } },
        // Half a day of room each side, so the first and last bars are whole.
        scales: {
          x: { time: true, range: (_u, min, max) => [min - 43200, max + 43200] },
          y: { range: (_u, _min, max) => [0, Math.max(4, max)] },
        },
        axes: [
          {
            stroke: '#5b6675',
            grid: { show: false },
            values: (_u, ticks) => ticks.map((t) => new Date(t * 1000).toISOString().slice(5, 10)),
          },
          {
            stroke: '#5b6675',
            size: 40,
            values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? String(t) : '')),
          },
        ],
        series: [
          { value: (_u, t) => (t == null ? '' : new Date(t * 1000).toISOString().slice(0, 10)) },
          { label: 'rejected', fill: '#e98b84', stroke: '#e98b84', width: 0, paths: bars, points: { show: false } },
          { label: 'accepted', fill: '#5b9bdc', stroke: '#5b9bdc', width: 0, paths: bars, points: { show: false } },
        ],
      },
      [xs, total, accepted],
      box,
    );
  };
  // Drawn once the figure is in the page and has a width; redrawn when that width changes.
  new ResizeObserver(() => box.isConnected && draw()).observe(box);
  return box;
}

/**
 * `points`: the ledger's equity curve, [{time: ISO, equity}], oldest first (docs/ledger.md,
 * "Statistics"): one point per exit time, drawn as steps, since equity changes only at an exit.
 */
export function equityChart(points, label) {
  const box = h('figure', { class: 'chart equity' }, h('figcaption', null, label));
  const xs = points.map((p) => Date.parse(p.time) / 1000);
  const ys = points.map((p) => p.equity);
  const last = points.at(-1);
  box.append(
    h(
      'p',
      { class: 'visually-hidden' },
      last ? `${points.length} points, from ${ys[0]} to ${last.equity} on ${last.time.slice(0, 10)}.` : 'No points.',
    ),
  );
  let plot = null;
  const draw = () => {
    const width = Math.max(240, box.clientWidth - 8);
    if (plot) return plot.setSize({ width, height: 200 });
    plot = new uPlot(
      {
        width,
        height: 200,
        legend: { show: true, live: false },
        cursor: { drag: { x: false, y: false } },
        scales: {
          x: { time: true },
          // A flat curve still gets a visible range around its value.
          y: { range: (_u, min, max) => (min === max ? [min - 1, max + 1] : [min, max]) },
        },
        axes: [
          { stroke: '#5b6675', grid: { show: false } },
          { stroke: '#5b6675', size: 60 },
        ],
        series: [
          { value: (_u, t) => (t == null ? '' : new Date(t * 1000).toISOString().slice(0, 16).replace('T', ' ')) },
          {
            label: 'equity',
            stroke: '#2f6fb3',
            width: 2,
            fill: 'rgba(91, 155, 220, 0.15)',
            paths: uPlot.paths.stepped({ align: 1 }),
          },
        ],
      },
      [xs, ys],
      box,
    );
  };
  new ResizeObserver(() => box.isConnected && draw()).observe(box);
  return box;
}
