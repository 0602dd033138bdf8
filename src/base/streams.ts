// Every stream name of the durable log, and the msg_id rule that ties a nest's messages to their
// stream's seq (docs/contract.md; docs/architecture.md "One durable log"). Spelled here and nowhere else.

/** A list's events: list.started ... list.finished. */
export const listStream = (listId: string) => `list:${listId}`;
/** A nest's messages, one event per message; its seq n is message n. */
export const nestStream = (nestId: string) => `nest:${nestId}`;
/**
 * A nest's side log, what it records beside its messages: the Sentry's inspections, the trust
 * changes they lead to, and the asks that expired unanswered (never on the nest stream, whose seq
 * n is message n).
 */
export const watchStream = (nestId: string) => `watch:${nestId}`;

/**
 * The line an event's webhook deliveries wait in, per endpoint (docs/webhooks.md): its stream,
 * except that a nest's side log goes in line with its messages, so an ask's expiry or the trust
 * change it caused never overtakes the ask.opened before it.
 */
export const deliveryLineOf = (stream: string) =>
  stream.startsWith("watch:") ? `nest:${stream.slice("watch:".length)}` : stream;

/** What every msg_id of a nest starts with (the REST stream's frames are laid out with it). */
export const msgIdPrefix = (nestId: string) => `${nestId}-`;
/** msg_id is <nest_id>-<n>, n from 1 in nest order; it is also the nest stream's SSE id. */
export const msgIdOf = (nestId: string, n: number) => `${msgIdPrefix(nestId)}${n}`;
/** The n of a msg_id of `nestId` as text, or the text unchanged when it is not one of the nest's. */
export const msgNumberText = (nestId: string, text: string) =>
  text.startsWith(msgIdPrefix(nestId)) ? text.slice(msgIdPrefix(nestId).length) : text;
