// The webhook settings (docs/webhooks.md) are declared with the others in
// src/base/settings/webhooks.ts; this names their type where the webhook code has always found it.
export type { WebhookConfig } from "./settings/index.ts";
export { DEFAULT_RETRY_SCHEDULE_S } from "./settings/webhooks.ts";
