/**
 * Collects the problems found in one signal with the body position each belongs to, and hands
 * them back in body order (problems at one position keep the order they were found in).
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
    return [...this.found].sort((a, b) => a.position - b.position).map((entry) => entry.problem);
  }
}
