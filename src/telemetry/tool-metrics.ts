// What /metrics says of the tool servers (docs/tools.md "State and metrics"): per server, whether
// it is up, its calls and errors, its tools and restarts, read from the connections this instance
// holds when scraped (no database read). Labels are bounded: at most MAX_SERVERS servers, named by
// the owner. Gauges, not counters: a registration that changes starts a new connection from zero.
import { Gauge, type Registry } from "prom-client";
import type { ToolServers } from "../tools/catalog.ts";
import type { ServerState } from "../tools/connection.ts";

export function observeToolServers(registry: Registry, tools: ToolServers): void {
  const gauge = (name: string, help: string, read: (state: ServerState) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["server"],
      registers: [registry],
      collect() {
        this.reset(); // a removed server leaves the scrape
        for (const { name: server, state } of tools.states()) this.set({ server }, read(state));
      },
    });
  gauge("crows_tool_server_up", "1 while a tool server is connected, else 0.", (s) => (s.status === "up" ? 1 : 0));
  gauge("crows_tool_server_calls", "Calls made to a tool server since its connection was made.", (s) => s.calls);
  gauge(
    "crows_tool_server_errors",
    "Calls to a tool server that failed (a named error) or that the tool answered as an error.",
    (s) => s.errors,
  );
  gauge("crows_tool_server_tools", "Tools a tool server offers after the caps.", (s) => s.tools ?? 0);
  gauge("crows_tool_server_restarts", "Times a tool server was started again after a crash.", (s) => s.restarts);
}
