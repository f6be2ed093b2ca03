import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * One registry per app instance (not prom-client's global one), so several instances in one
 * process, as the tests run them, never collide.
 */
export function createMetrics(options: { defaultMetrics?: boolean } = {}) {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: "onair_" });
  const httpRequests = new Counter({
    name: "onair_http_requests_total",
    help: "HTTP requests served, by route and status",
    labelNames: ["route", "status"] as const,
    registers: [registry],
  });
  const slackAckSeconds = new Histogram({
    name: "onair_slack_ack_seconds",
    help: "Time from receiving a Slack request to acknowledging it",
    labelNames: ["kind"] as const,
    buckets: [0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const slackCalls = new Counter({
    name: "onair_slack_calls_total",
    help: "Slack Web API calls, by method and outcome",
    labelNames: ["method", "outcome"] as const,
    registers: [registry],
  });
  const upstreamCalls = new Counter({
    name: "onair_upstream_calls_total",
    help: "Calls to the upstream services, by service, route and status",
    labelNames: ["service", "route", "status"] as const,
    registers: [registry],
  });
  const upstreamSeconds = new Histogram({
    name: "onair_upstream_call_seconds",
    help: "Latency of calls to the upstream services",
    labelNames: ["service", "route"] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const webhookMessages = new Counter({
    name: "onair_webhook_messages_total",
    help: "Webhook messages from the events service, by outcome",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const attendanceSnapshots = new Counter({
    name: "onair_attendance_snapshots_total",
    help: "Attendance snapshots for the Attendance button and /onair report: taken, or reused from one taken moments before",
    labelNames: ["source"] as const,
    registers: [registry],
  });
  const queueDepth = new Gauge({
    name: "onair_queue_depth",
    help: "Items waiting in an internal queue",
    labelNames: ["queue"] as const,
    registers: [registry],
  });
  return {
    registry,
    httpRequests,
    slackAckSeconds,
    slackCalls,
    upstreamCalls,
    upstreamSeconds,
    webhookMessages,
    attendanceSnapshots,
    queueDepth,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
