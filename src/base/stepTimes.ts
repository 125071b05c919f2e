/**
 * The time of each step of a sequence, from the end of the step before (the first from `start`), for a log line:
 * `ledger 4.1, holds 0.9, …` (milliseconds).
 */
export class StepTimes {
  private readonly steps: string[] = [];
  private last: number;

  constructor(start: number = performance.now()) {
    this.last = start;
  }

  /** The step `name` ends now. */
  mark(name: string): void {
    const now = performance.now();
    this.steps.push(`${name} ${(now - this.last).toFixed(1)}`);
    this.last = now;
  }

  toString(): string {
    return this.steps.join(', ');
  }
}
