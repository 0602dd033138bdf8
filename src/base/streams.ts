// Every stream name of the durable log, and the msg_id rule that ties a nest's messages to their
// stream's seq (EVENTS.md; docs/architecture.md "One durable log"). Spelled here and nowhere else.

/** A list's events: list.started ... list.finished. */
export const listStream = (listId: string) => `list:${listId}`;
/** A nest's messages, one event per message; its seq n is message n. */
export const nestStream = (nestId: string) => `nest:${nestId}`;
/** A nest's watch events: the Sentry's inspections and the trust changes they lead to. */
export const watchStream = (nestId: string) => `watch:${nestId}`;

/** What every msg_id of a nest starts with (the REST stream's frames are laid out with it). */
export const msgIdPrefix = (nestId: string) => `${nestId}-`;
/** msg_id is <nest_id>-<n>, n from 1 in nest order; it is also the nest stream's SSE id. */
export const msgIdOf = (nestId: string, n: number) => `${msgIdPrefix(nestId)}${n}`;
/** The n of a msg_id of `nestId` as text, or the text unchanged when it is not one of the nest's. */
export const msgNumberText = (nestId: string, text: string) => (text.startsWith(msgIdPrefix(nestId)) ? text.slice(msgIdPrefix(nestId).length) : text);
