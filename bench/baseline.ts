import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The figures recorded in docs/performance.md, as `bench/baseline.json`: each with the
 * noise seen between identical runs on the development machine and which way is better. A run
 * compares its figures with them and says, per figure, whether it is within noise.
 */
export interface BaselineFigure {
  value: number;
  /** Absolute: a difference at most this large is noise. */
  noise: number;
  better: 'higher' | 'lower';
  unit: string;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const BASELINE_FILE = path.join(here, 'baseline.json');

export function compareWithBaseline(figures: Map<string, number>): void {
  if (figures.size === 0) return;
  const baseline = JSON.parse(readFileSync(BASELINE_FILE, 'utf8')) as {
    recorded: string;
    figures: Record<string, BaselineFigure>;
  };
  let out = `\nagainst the baseline of ${baseline.recorded} (bench/baseline.json, docs/performance.md)\n| figure | baseline | now | verdict |\n|---|---|---|---|\n`;
  for (const [name, now] of figures) {
    const base = baseline.figures[name];
    if (base === undefined) {
      out += `| ${name} | — | ${format(now)} | no baseline |\n`;
      continue;
    }
    const gain = base.better === 'higher' ? now - base.value : base.value - now;
    const verdict = Number.isNaN(now)
      ? 'no figure'
      : Math.abs(gain) <= base.noise
        ? 'within noise'
        : gain > 0
          ? 'BETTER'
          : 'WORSE';
    out += `| ${name} | ${format(base.value)} ${base.unit} | ${format(now)} ${base.unit} | ${verdict} (±${format(base.noise)}) |\n`;
  }
  process.stdout.write(out);
}

function format(value: number): string {
  return Math.abs(value) < 10 ? value.toFixed(2) : value.toFixed(0);
}
