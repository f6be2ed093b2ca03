import { Agent, type Dispatcher, request } from "undici";
import { scrub } from "../log.ts";
import type { WebhookConfig } from "./events-schemas.ts";

/** The outcome of one webhook delivery. */
export interface DeliveryResult {
  readonly url: string;
  readonly method: "POST" | "PUT";
  /** The receiver's status; null when no answer came (refused, timed out, aborted). */
  readonly status: number | null;
  readonly ok: boolean;
  readonly error?: string;
}

export interface DelivererOptions {
  /** When absent the sandbox uses an agent of its own and closes it on close(). */
  dispatcher?: Dispatcher | undefined;
  timeoutMs?: number;
}

/**
 * Sends webhook messages as the events service would: the registered method, the registered
 * headers, a JSON body. No retries (the spec shows none), so the caller sees every failure.
 */
export class Deliverer {
  private readonly dispatcher: Dispatcher;
  private readonly owned: Agent | undefined;
  private readonly timeoutMs: number;
  private closed = false;

  constructor(options: DelivererOptions = {}) {
    this.owned =
      options.dispatcher === undefined ? new Agent({ keepAliveTimeout: 4_000 }) : undefined;
    this.dispatcher = options.dispatcher ?? this.owned!;
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async deliver(target: WebhookConfig, message: unknown): Promise<DeliveryResult> {
    const base = { url: target.url, method: target.method };
    if (this.closed) return { ...base, status: null, ok: false, error: "sandbox closed" };
    try {
      const res = await request(target.url, {
        method: target.method,
        headers: {
          ...target.headers,
          "content-type": "application/json",
          "user-agent": "onair-sandbox-events/1",
        },
        body: JSON.stringify(message),
        dispatcher: this.dispatcher,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      await res.body.dump();
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { ...base, status: res.statusCode, ok };
    } catch (err) {
      const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      return { ...base, status: null, ok: false, error: scrub(text) };
    }
  }

  /**
   * Delivers `messages` in order with at most `concurrency` in flight; with 1 each waits for the
   * previous answer, so the receiver sees them in order.
   */
  async deliverAll(
    target: WebhookConfig,
    messages: readonly unknown[],
    concurrency: number,
  ): Promise<{ delivered: number; failed: number; failures: DeliveryResult[] }> {
    let next = 0;
    let delivered = 0;
    let failed = 0;
    // A sample is enough to tell why; 20,000 identical failures would only cost memory.
    const failures: DeliveryResult[] = [];
    const worker = async () => {
      while (next < messages.length) {
        const message = messages[next];
        next += 1;
        const result = await this.deliver(target, message);
        if (result.ok) delivered += 1;
        else {
          failed += 1;
          if (failures.length < 10) failures.push(result);
        }
      }
    };
    const workers = Math.max(1, Math.min(concurrency, messages.length));
    await Promise.all(Array.from({ length: workers }, worker));
    return { delivered, failed, failures };
  }

  async close(): Promise<void> {
    this.closed = true;
    // Deliveries in flight on our own agent are cut off; an injected dispatcher is its owner's.
    await this.owned?.destroy();
  }
}
