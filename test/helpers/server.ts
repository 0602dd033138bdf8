// The in-process test server lives in harness/, shared with bench/ (which imports no test helper).
export * from "../../harness/server.ts";
