// The bounds every tool server lives inside (docs/tools.md "Hostile tools"): whatever a server says
// or does, crows reads at most this much of it, waits at most this long, and offers at most this
// many of its tools. Each bound, when hit, is a named error on the call or a count in the
// server's state, and nothing else on the server notices.

/** A call's text, as the flight sees it; `bytes` still says how much the server sent. */
export const MAX_OUTPUT_BYTES = 64 * 1024;
/** One JSON-RPC message from a stdio server (or one HTTP answer): past this the connection is cut. */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;
/** Tools offered per server; the rest are counted as dropped. */
export const MAX_TOOLS_PER_SERVER = 128;
/** A tool's input schema, as JSON; a tool with a larger one is dropped. */
export const MAX_SCHEMA_BYTES = 16 * 1024;
/** A tool's description, cut to this many characters. */
export const MAX_DESCRIPTION_CHARS = 1024;
/** Pages of tools/list read at most (a server that pages forever stops here). */
export const MAX_LIST_PAGES = 10;
/** Starting a server (spawn and initialize) and listing its tools, each. */
export const LIST_TIMEOUT_MS = 15_000;
/** Waits between restarts after a crash or a failed start: doubling from the first to the last. */
export const RESTART_BACKOFF = { initialMs: 1_000, maxMs: 60_000 } as const;
/** How many servers an owner may connect. */
export const MAX_SERVERS = 50;
