// What /metrics says of the provider's weather (docs/operations.md, "Metrics"): calls through each
// gate by outcome, waits begun, queue depth, calls in the air, circuit state and the learned pace.
// Labels are bounded: a gate is "model" or "classifier", an outcome one of the gate's kinds.
import { Counter, Gauge, type Registry } from "prom-client";
import type { CircuitState, ProviderPacer } from "../models/provider-pacer.ts";
import type { FlightBoard } from "../flock/flight-board.ts";

const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, "half-open": 1, open: 2 };

export function observeProviderWeather(
  registry: Registry,
  gates: Array<{ label: "model" | "classifier"; gate: ProviderPacer }>,
  board?: FlightBoard,
): void {
  const registers = [registry];
  const calls = new Counter({
    name: "crows_provider_calls_total",
    help: "Calls through a provider gate, by gate and outcome (ok, weather, timeout, config, answer, aborted, unavailable).",
    labelNames: ["gate", "outcome"],
    registers,
  });
  const circuitOpened = new Counter({
    name: "crows_provider_circuit_opened_total",
    help: "Times a provider gate's circuit opened.",
    labelNames: ["gate"],
    registers,
  });
  for (const { label, gate } of gates) {
    gate.listen({
      called: (outcome) => calls.inc({ gate: label, outcome }),
      circuit: (state) => {
        if (state === "open") circuitOpened.inc({ gate: label });
      },
    });
  }
  const gauge = (name: string, help: string, read: (gate: ProviderPacer) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["gate"],
      registers,
      collect() {
        for (const { label, gate } of gates) this.set({ gate: label }, read(gate));
      },
    });
  gauge(
    "crows_provider_queue_depth",
    "Calls waiting for a provider gate's slot (or its circuit).",
    (gate) => gate.stats().queued,
  );
  gauge("crows_provider_calls_in_flight", "Calls in the air through a provider gate.", (gate) => gate.stats().inFlight);
  gauge(
    "crows_provider_circuit_state",
    "A provider gate's circuit: 0 closed, 1 half-open (one trial call), 2 open.",
    (gate) => CIRCUIT_VALUE[gate.stats().circuit],
  );
  gauge(
    "crows_provider_pace_per_second",
    "The start rate a provider gate paces to after rate limits (0: unpaced).",
    (gate) => {
      const rate = gate.stats().rate;
      return Number.isFinite(rate) ? rate : 0;
    },
  );
  if (!board) return;
  const waits = new Counter({
    name: "crows_provider_waits_total",
    help: "Waits scheduled by flights on their provider (each retry after trouble, each hold by an open circuit).",
    registers,
  });
  board.onChange((change) => {
    if (change.kind === "waiting") waits.inc();
  });
  new Gauge({
    name: "crows_provider_flights_waiting",
    help: "Flights waiting on the provider now.",
    registers,
    collect() {
      this.set(board.waiting().length);
    },
  });
}
