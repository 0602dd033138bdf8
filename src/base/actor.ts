// Who caused an event a request led to: recorded as the `actor` field the events carry. The link
// kind is a decide link (src/webhooks/links.ts), naming the webhook endpoint it went out on.
export type Actor = { kind: "owner" | "token" | "system" | "link"; token_id?: string; token_name?: string; webhook_id?: string };
