// The scripted owner lives in harness/, shared with bench/ (which imports no test helper).
export * from "../../harness/owner.ts";
