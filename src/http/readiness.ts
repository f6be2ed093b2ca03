/**
 * Whether the app may take work: closed while it starts (the port is bound before Bolt's
 * authorization and the live engine are up, so that its URLs can name the real port) and again
 * while it stops. A closed gate makes `/slack/events`, the OAuth routes, the webhook route and
 * `/readyz` answer 503 with the reason: Slack and the events service try again, a load balancer
 * sends the next request elsewhere. It also counts the work in flight, so a stop can wait for
 * it before the store closes.
 */
export interface Readiness {
  /** Why no work is taken now, or undefined once open. */
  refusal(): string | undefined;
  /** Every part is up: take work. */
  open(): void;
  /** Stopping: take no new work. */
  close(): void;
  /** Counts `work` as in flight until it settles; returns it. */
  track<T>(work: Promise<T>): Promise<T>;
  /**
   * Counts one piece of work as in flight until `leave` is called once for it: track's count
   * without a promise, for what thousands a second go through (every HTTP request).
   */
  enter(): void;
  leave(): void;
  /** Resolves once nothing is in flight, or after `ms`, whichever is first; true if drained. */
  drained(ms: number): Promise<boolean>;
}

export const STARTING = "starting up; try again shortly";
export const STOPPING = "shutting down; try again shortly";

export function createReadiness(): Readiness {
  let state: "starting" | "open" | "stopping" = "starting";
  let inFlight = 0;
  let idle: Array<() => void> = [];
  const settled = () => {
    inFlight--;
    if (inFlight === 0) {
      const waiting = idle;
      idle = [];
      for (const done of waiting) done();
    }
  };
  return {
    refusal: () => (state === "open" ? undefined : state === "starting" ? STARTING : STOPPING),
    open() {
      if (state === "starting") state = "open";
    },
    close() {
      state = "stopping";
    },
    track(work) {
      inFlight++;
      work.then(settled, settled);
      return work;
    },
    enter() {
      inFlight++;
    },
    leave: settled,
    drained(ms) {
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        idle.push(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
  };
}
