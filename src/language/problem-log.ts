/**
 * Collects the problems found in one signal with the body position each belongs to, and hands
 * them back in body order (problems at one position keep the order they were found in), at
 * most one per parameter: the first in body order. A later problem of the same parameter is
 * a consequence or a repeat of that one (vol_dollar=0 needs no stop advice; vol=1,vol=2,vol=3
 * needs "given more than once" said once), and fixing the first shows any that remain.
 */
import type { ErrorCode, Problem } from '../errors/catalog.js';

export class ProblemLog {
  private readonly found: { position: number; problem: Problem }[] = [];

  add(position: number, code: ErrorCode, detail: string, param?: string): void {
    this.found.push({ position, problem: param === undefined ? { code, detail } : { code, param, detail } });
  }

  get isEmpty(): boolean {
    return this.found.length === 0;
  }

  inBodyOrder(): Problem[] {
    const reported = new Set<string>();
    const problems: Problem[] = [];
    for (const { problem } of [...this.found].sort((a, b) => a.position - b.position)) {
      if (problem.param !== undefined) {
        if (reported.has(problem.param)) continue;
        reported.add(problem.param);
      }
      problems.push(problem);
    }
    return problems;
  }
}
