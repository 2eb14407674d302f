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
