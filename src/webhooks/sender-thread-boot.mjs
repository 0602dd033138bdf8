// The webhook sender thread's entry point (sender-host.ts starts it). A worker thread does not
// inherit a loader registered in-process, which is how bin/crows loads TypeScript, so the thread
// registers tsx itself (the host starts it with no inherited flags, so it is registered once).
import { register } from "tsx/esm/api";

register();
await import("./sender-thread.ts");
