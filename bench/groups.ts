/**
 * Every group of rows `npm run bench` runs, in this order. A new group: a file in rows/ that
 * exports `(rows: Row[]) => Promise<void>`, and one line here. `name` is what BENCH_ONLY selects.
 */
import type { RowGroup } from "./harness/table.ts";
import { attendeeBurstRows, bigEventRows } from "./rows/burst.ts";
import { checkpointRows } from "./rows/checkpoint.ts";
import {
  ingestPostgres,
  ingestRedis,
  ingestSqlite,
  ingestSqliteInline,
  ingestSqliteNoWorker,
} from "./rows/ingest.ts";
import { redisKeyspaceRows } from "./rows/keyspace.ts";
import { liveScheduleCostRows } from "./rows/live-schedule.ts";
import { manyEventsRows } from "./rows/many-events.ts";
import { reportRows } from "./rows/report.ts";
import { singleFlightRows } from "./rows/single-flight.ts";
import { slashCommandRows } from "./rows/slash-command.ts";
import { viewsOpenRows } from "./rows/views-open.ts";

export const GROUPS: readonly RowGroup[] = [
  { name: "singleFlightRows", run: singleFlightRows },
  { name: "slashCommandRows", run: slashCommandRows },
  { name: "attendeeBurstRows", run: attendeeBurstRows },
  { name: "bigEventRows", run: bigEventRows },
  { name: "viewsOpenRows", run: viewsOpenRows },
  { name: "ingestSqlite", run: ingestSqlite },
  { name: "ingestSqliteInline", run: ingestSqliteInline },
  { name: "ingestSqliteNoWorker", run: ingestSqliteNoWorker },
  { name: "ingestRedis", run: ingestRedis },
  { name: "ingestPostgres", run: ingestPostgres },
  { name: "sqliteCheckpoints", run: checkpointRows },
  { name: "redisKeyspace", run: redisKeyspaceRows },
  { name: "attendanceReport", run: reportRows },
  { name: "liveScheduleCost", run: liveScheduleCostRows },
  { name: "manyEvents", run: manyEventsRows },
];
