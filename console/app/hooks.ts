import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { gql } from "./api.ts";
import { currentErrors, currentStreams, reportError, subscribeStatus } from "./status.ts";

/** Re-renders on any status change (errors, stream states). */
export function useStatus() {
  const [, setTick] = useState(0);
  useEffect(() => subscribeStatus(() => setTick((n) => n + 1)), []);
  return { errors: currentErrors(), streams: currentStreams() };
}

/** The current time, ticking every `ms`. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}

/**
 * A query's data, loaded on mount and whenever `key` changes; reload() fetches again (callers
 * debounce live refreshes through it). A failed load is shown to the owner and keeps the old data.
 */
export function useQuery<T>(what: string, query: string, variables: Record<string, unknown> = {}, key = "") {
  const [data, setData] = useState<T | undefined>(undefined);
  const vars = useRef(variables);
  vars.current = variables;
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    try {
      const result = await gql<T>(query, vars.current);
      if (mine === generation.current) setData(result);
    } catch (error) {
      reportError(`${what}: ${(error as Error).message}`);
    }
  }, [query, what]);
  useEffect(() => {
    setData(undefined);
    void reload();
  }, [reload, key]);
  return { data, reload };
}

/** A function that runs `action` at most once per `ms`, trailing (for refetches on live events). */
export function useDebounced(action: () => void, ms = 150): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const latest = useRef(action);
  latest.current = action;
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      latest.current();
    }, ms);
  }, [ms]);
}

export function timeLeft(deadline: string, now: number): string {
  const ms = Date.parse(deadline) - now;
  if (ms <= 0) return "failing closed now";
  const s = Math.floor(ms / 1000); // a fresh 10-minute window reads 9:59, never more than it has
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")} left`;
}
