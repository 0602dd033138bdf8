// How a GraphQL type declares its wire form: the JSON text of each leaf field, read straight off the
// stored event, so a projected subscription (src/server/graphql/projection/) writes an event without
// running graphql-js. Here, below the server, because the schema declares these fields.
/** How one leaf field reads its value off the event: a value its scalar serializes, or its JSON text. */
/** `json` may answer undefined: that event is then executed by graphql. */
export type WireField<T> = { value: (source: T) => unknown } | { json: (source: T) => string | undefined };
export type WireFields<T> = Readonly<Record<string, WireField<T>>>;

/** A subscription field whose per-event value is the source event itself, of a type with wire fields. */
export interface ProjectableSubscription {
  fields: WireFields<never>;
}

const ISO_MS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{3}Z$/;

/**
 * The JSON of an ISO timestamp that is already what `Date#toISOString` writes (a real calendar date,
 * milliseconds, Z): the DateTime scalar (`new Date(value).toISOString()`) would write it unchanged,
 * and parsing then formatting a Date per event was most of a replay's projection. Anything else:
 * undefined (graphql serializes it).
 */
export function isoTimestampJson(ts: string): string | undefined {
  const match = ISO_MS.exec(ts);
  if (!match) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || Number(match[4]) > 23 || Number(match[5]) > 59 || Number(match[6]) > 59)
    return undefined;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return day <= days ? `"${ts}"` : undefined;
}
