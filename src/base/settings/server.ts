// The server's settings (where it listens, who may call it, how long a request may take) and the
// streams' (heartbeat, caps). docs/security.md says why each bound is where it is.
import { setting } from "./declare.ts";
import { hostNames, ms, origins, text, token, tokens, whole } from "./kinds.ts";

export const SERVER = {
  host: setting<string>({
    env: "CROWS_HOST",
    group: "server",
    kind: text,
    audience: "owner",
    default: "127.0.0.1",
    describe:
      "address to listen on; anything but loopback needs CROWS_TOKEN, else the start is refused (docs/security.md)",
  }),
  port: setting<number>({
    env: "CROWS_PORT",
    group: "server",
    kind: whole(0, 65535),
    audience: "owner",
    default: 7717,
    describe: "port; 0 picks a free one, printed in the ready line",
  }),
  token: setting<string | undefined>({
    env: "CROWS_TOKEN",
    group: "server",
    kind: token,
    audience: "owner",
    secret: "whole",
    default: undefined,
    describe:
      "the owner's access token; when set every request needs `Authorization: Bearer <token>` or the `crows_token` cookie that `GET /?token=<token>` sets",
  }),
  readTokens: setting<string[]>({
    env: "CROWS_READ_TOKENS",
    group: "server",
    kind: tokens,
    audience: "tuning",
    secret: "whole",
    default: [],
    describe:
      'the old form of read-only tokens: comma-separated, unnamed, the `read` scope (and `/metrics`); writes are a 403; need CROWS_TOKEN. Prefer named tokens (`crows token create`, docs/security.md "Named tokens"), which can be revoked without a restart',
  }),
  corsOrigins: setting<string[]>({
    env: "CROWS_CORS_ORIGINS",
    group: "server",
    kind: origins,
    audience: "owner",
    default: [],
    defaultText: "none",
    describe:
      "comma-separated origins (`http://localhost:5173`) whose pages may call the server; any other origin is refused (403) and never gets CORS headers",
  }),
  publicHosts: setting<string[]>({
    env: "CROWS_PUBLIC_HOSTS",
    group: "server",
    kind: hostNames,
    audience: "owner",
    default: [],
    defaultText: "none",
    describe:
      "comma-separated host names (no scheme, no port) the server answers to besides localhost, 127.0.0.1, [::1] and its listen address; any other Host is a 421",
  }),
  requestTimeoutMs: setting<number>({
    env: "CROWS_REQUEST_TIMEOUT_MS",
    group: "server",
    kind: ms(100, 3_600_000),
    audience: "tuning",
    default: 30_000,
    describe:
      "how long a request may take to arrive, headers and body (headers alone: at most 20 s of it); a client that stops sending halfway gets a 408 and the connection closes. Keep it above 3 s: below that, a client that declares a body over the limit and waits gets this 408 before the oversized body's 413 (docs/security.md)",
  }),
  graphqlDeadlineMs: setting<number>({
    env: "CROWS_GRAPHQL_DEADLINE_MS",
    group: "server",
    kind: ms(10),
    audience: "tuning",
    default: 10_000,
    describe:
      "how long a GraphQL query may run; past it the answer is a 503 `QUERY_TIMEOUT` and the query's remaining work is not started (docs/security.md)",
  }),
  graphqlMaxAnswerBytes: setting<number>({
    env: "CROWS_GRAPHQL_MAX_ANSWER_BYTES",
    group: "server",
    kind: whole(1_000, Number.MAX_SAFE_INTEGER, "bytes"),
    audience: "tuning",
    default: 16_000_000,
    describe: "the largest GraphQL answer (its JSON, in bytes); a larger one is a 400 `ANSWER_TOO_LARGE`",
  }),
  restartReason: setting<string | undefined>({
    env: "CROWS_RESTART_REASON",
    group: "server",
    kind: text,
    audience: "tuning",
    default: undefined,
    describe:
      "set by `crows restart --reason` for the server it starts, not by hand: the reason goes to `server.json` and the log (its first 200 characters)",
  }),
};

export const STREAMS = {
  heartbeatMs: setting<number>({
    env: "CROWS_HEARTBEAT_MS",
    group: "streams",
    kind: ms(10),
    audience: "tuning",
    default: 15_000,
    describe: "SSE heartbeat interval",
  }),
  agentUpdateMs: setting<number>({
    env: "CROWS_AGENT_UPDATE_MS",
    group: "streams",
    kind: ms(0, 60_000),
    audience: "tuning",
    default: 100,
    describe:
      'while a list runs, at most one MCP progress notification or A2A status update per this interval, holding every event since the last as a line; an approval asked and the list\'s end go at once. 0: one for each batch of events as it comes (docs/integrations.md "Updates")',
  }),
  maxStreams: setting<number | undefined>({
    env: "CROWS_MAX_STREAMS",
    group: "streams",
    kind: whole(1),
    audience: "tuning",
    default: undefined,
    defaultText: "the fd limit less its headroom",
    describe:
      "SSE streams open at once, in all (REST and GraphQL); past it a 503 with Retry-After. Never above the fd limit less a headroom of a tenth of it, 256 to 1,024 descriptors (docs/security.md)",
  }),
  maxStreamsPerClient: setting<number | undefined>({
    env: "CROWS_MAX_STREAMS_PER_CLIENT",
    group: "streams",
    kind: whole(1),
    audience: "tuning",
    default: undefined,
    defaultText: "half the total",
    describe: "SSE streams one client address may hold; past it a 429 with Retry-After",
  }),
};
