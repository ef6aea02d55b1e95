/** One step of stopping the local stack: closing a server, destroying a client, removing a file. */
export type CleanupStep = () => Promise<void>;

/**
 * What the local stack has started, to stop in reverse order: each part
 * registers its stop as soon as it runs, so a start that fails half-way
 * stops exactly what it had started.
 */
export class Cleanup {
  readonly #steps: CleanupStep[] = [];

  /** Registers the stop of something just started. */
  push(step: CleanupStep): void {
    this.#steps.push(step);
  }

  /**
   * Runs the steps registered so far, last first, once each: a second call
   * finds none. A step that throws ends the run (the rest are dropped).
   */
  readonly close = async (): Promise<void> => {
    for (const step of this.#steps.splice(0).reverse()) await step();
  };
}
