// The SSE client lives in harness/, shared with bench/ (which imports no test helper).
export * from "../../harness/sse.ts";
