// A suite that needs a service this machine may lack (PostgreSQL and Redis, a Chromium). When the
// service is there, its tests run as written. When it is not, every test is still registered, as
// skipped (uvu's test.skip), and named on stderr with the reason, so the run's "Skipped" count says
// how many did not run; its hooks (which would start the service's clients) are not run at all.
import type { Test } from "uvu";

export function gated<T>(runner: Test<T>, missing: string | null): Test<T> {
  if (missing === null) return runner;
  const skip = (name?: string) => {
    console.warn(`    skipped (${missing}): ${name ?? "(unnamed)"}`);
    runner.skip(name);
  };
  const noHook = Object.assign(() => {}, { each: () => {} });
  return Object.assign((name: string) => skip(name), {
    only: skip,
    skip,
    before: noHook,
    after: noHook,
    run: () => runner.run(),
  });
}
