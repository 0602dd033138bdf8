// Under each item of a list: its flights waiting on the model provider ("waiting for the
// provider: retry in 12 s") from flightWaits, and each flight's answer as it streams from
// flightText. A view only: the answer the owner approves is item.answered's, from listEvents.
import { useEffect, useState } from "preact/hooks";
import { follow } from "./api.ts";
import { useNow } from "./hooks.ts";

const FLIGHT_WAITS = `subscription FlightWaits($id: ID!) { flightWaits(listId: $id) { kind flightId itemId crow wait { reason retryAt deadline } } }`;
const FLIGHT_TEXT = `subscription FlightText($id: ID!) { flightText(listId: $id) { flightId itemId crow delta first } }`;

interface Wait {
  flightId: string;
  crow: string;
  reason: string;
  retryAt: number;
  deadline: number;
}

export interface FlightWeather {
  /** Item id -> its flights waiting now. */
  waits: Record<string, Wait[]>;
  /** Item id -> flight id -> the text streamed so far. */
  text: Record<string, Record<string, { crow: string; text: string }>>;
}

/** Follows a running list's waiting flights and streamed text while its view is open (a finished list has neither). */
export function useFlightWeather(listId: string, running: boolean): FlightWeather {
  const [waits, setWaits] = useState<Record<string, Wait[]>>({});
  const [text, setText] = useState<FlightWeather["text"]>({});
  useEffect(() => {
    if (!running) return;
    let n = 0; // these streams have no stored cursor: each item is new
    const stopWaits = follow<any>({
      name: `waits ${listId}`,
      query: FLIGHT_WAITS,
      field: "flightWaits",
      variables: () => ({ id: listId }),
      cursorOf: () => ++n,
      onItem: (change) =>
        setWaits((all) => {
          const others = (all[change.itemId] ?? []).filter((w) => w.flightId !== change.flightId);
          const mine =
            change.kind === "waiting" && change.wait
              ? [
                  ...others,
                  {
                    flightId: change.flightId,
                    crow: change.crow,
                    reason: change.wait.reason,
                    retryAt: Date.parse(change.wait.retryAt),
                    deadline: Date.parse(change.wait.deadline),
                  },
                ]
              : others;
          return { ...all, [change.itemId]: mine };
        }),
    });
    let m = 0;
    const stopText = follow<any>({
      name: `answers ${listId}`,
      query: FLIGHT_TEXT,
      field: "flightText",
      variables: () => ({ id: listId }),
      cursorOf: () => ++m,
      onItem: (piece) =>
        setText((all) => {
          const flights = { ...(all[piece.itemId] ?? {}) };
          const was = flights[piece.flightId];
          flights[piece.flightId] = { crow: piece.crow, text: (piece.first ? "" : (was?.text ?? "")) + piece.delta };
          return { ...all, [piece.itemId]: flights };
        }),
    });
    return () => {
      stopWaits();
      stopText();
    };
  }, [listId, running]);
  return { waits, text };
}

/** The item's waits and, until its answer arrives, the text its flights are writing. */
export function ItemWeather({
  itemId,
  weather,
  answered,
}: {
  itemId: string;
  weather: FlightWeather;
  answered: boolean;
}) {
  const now = useNow(1000);
  const waits = weather.waits[itemId] ?? [];
  const streaming = answered ? [] : Object.entries(weather.text[itemId] ?? {});
  if (waits.length === 0 && streaming.length === 0) return null;
  return (
    <div class="weather">
      {waits.map((w) => (
        <p key={w.flightId} class="waiting" role="status">
          {w.crow} is waiting for the provider: retry in {Math.max(0, Math.ceil((w.retryAt - now) / 1000))} s
          <span class="quiet">
            {" "}
            · {w.reason} · gives up in {Math.max(0, Math.ceil((w.deadline - now) / 1000))} s
          </span>
        </p>
      ))}
      {streaming.map(([flightId, f]) => (
        <p key={flightId} class="streaming" role="status" aria-live="polite" aria-label={`${f.crow} is writing`}>
          <span class="quiet">{f.crow} is writing: </span>
          {f.text}
        </p>
      ))}
    </div>
  );
}
