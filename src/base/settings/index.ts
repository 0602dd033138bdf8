// Every setting, declared once (the group files), and what comes from that one declaration: the
// zod schema of the environment, the typed Config the rest of the code reads, the docs tables
// (docs.ts) and `crows config` (src/cli/config-command.ts). docs/configuration.md lists them.
import { z } from "zod";
import type { Setting, Values } from "./declare.ts";
import { FLOCK } from "./flock.ts";
import { CLASSIFIER, MODELS } from "./models.ts";
import { SERVER, STREAMS } from "./server.ts";
import { STORAGE } from "./storage.ts";
import { WEBHOOKS } from "./webhooks.ts";

const TOP = { ...SERVER, ...STORAGE, ...MODELS, ...CLASSIFIER, ...FLOCK, ...STREAMS };

export type WebhookConfig = Values<typeof WEBHOOKS>;
export type Config = Values<typeof TOP> & { webhooks: WebhookConfig };

/** One setting and where its value sits in Config: a top-level field, or one under `webhooks`. */
export interface Placed {
  readonly field: string;
  readonly under?: "webhooks";
  readonly setting: Setting<any>;
}

/** Every setting, in the order of its group (GROUPS) and of its declaration. */
export const SETTINGS: readonly Placed[] = [
  ...Object.entries(TOP).map(([field, setting]) => ({ field, setting })),
  ...Object.entries(WEBHOOKS).map(([field, setting]) => ({ field, under: "webhooks" as const, setting })),
];

/**
 * The environment's schema: each variable's text (unset or blank: absent) to its value, the old
 * `_S` names beside the new ones. Its first issue is the first bad variable, in this order.
 */
export const ENV_SCHEMA = z.object(
  Object.fromEntries(
    SETTINGS.flatMap(({ setting }) => [
      [setting.env, setting.kind.zod.optional()],
      ...(setting.deprecated ? [[setting.deprecated.env, setting.deprecated.kind.zod.optional()]] : []),
    ]),
  ),
);

/** Every variable the schema reads (old names included). */
export const ENV_NAMES: readonly string[] = Object.keys(ENV_SCHEMA.shape);

export { GROUPS, type Group, ConfigError, type Setting } from "./declare.ts";
