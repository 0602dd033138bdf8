// Reads the settings from the environment through the one schema (index.ts): each value with its
// source, the warnings for old names still in use, and the checks that span two settings. A bad
// value is a ConfigError of one line naming the variable, as it always was.
import type { z } from "zod";
import { windowUnderFloor } from "./windows.ts";
import { ConfigError, type Setting } from "./declare.ts";
import { type Config, ENV_NAMES, ENV_SCHEMA, type Placed, SETTINGS } from "./index.ts";

type Env = Record<string, string | undefined>;

/** Where a value came from: its default, its variable, or the old name it was read from. */
export type Source = "default" | "environment" | `deprecated ${string}`;

export interface Read extends Placed {
  readonly value: unknown;
  readonly source: Source;
}

export interface Loaded {
  readonly config: Config;
  /** Every setting with its value and source, in declaration order. */
  readonly read: readonly Read[];
  /** One line per old name still in use, naming the new one and the value converted. */
  readonly warnings: readonly string[];
}

/** True for an address or name that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === "::ffff:127.0.0.1";
}

/** The one line for a bad variable: the kind's own words, or its rule and the text given. */
function badLine(name: string, issue: z.core.$ZodIssue, raw: string | undefined): string {
  if (issue.code === "custom") return `${name} ${issue.message}`;
  const placed = SETTINGS.find(({ setting }) => setting.env === name || setting.deprecated?.env === name);
  const kind = placed?.setting.env === name ? placed.setting.kind : placed?.setting.deprecated?.kind;
  return `${name} ${kind?.rule ?? "is not valid"}, got ${JSON.stringify(raw)}`;
}

export function readSettings(env: Env, overrides: Partial<Config> = {}): Loaded {
  const given: Record<string, string> = {};
  for (const name of ENV_NAMES) {
    const raw = env[name];
    if (raw !== undefined && raw.trim() !== "") given[name] = raw;
  }
  const parsed = ENV_SCHEMA.safeParse(given);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new ConfigError(badLine(name, issue, given[name]));
  }
  const values = parsed.data as Record<string, unknown>;
  const known: Record<string, unknown> = {};
  const read: Array<Read & { computed?: boolean }> = [];
  const warnings: string[] = [];
  for (const placed of SETTINGS) {
    const { setting } = placed;
    const old = setting.deprecated;
    if (values[setting.env] !== undefined) {
      read.push({ ...placed, value: values[setting.env], source: "environment" });
      if (old && values[old.env] !== undefined)
        warnings.push(`${old.env} is ignored: ${setting.env} is set (${old.env} goes in the next release)`);
    } else if (old && values[old.env] !== undefined) {
      const value = old.convert(values[old.env]);
      read.push({ ...placed, value, source: `deprecated ${old.env}` });
      warnings.push(
        `${old.env} is deprecated and goes in the next release; read as ${setting.env}=${setting.kind.show(value)}`,
      );
    } else if (typeof setting.default === "function") {
      read.push({ ...placed, value: undefined, source: "default", computed: true });
    } else {
      read.push({ ...placed, value: setting.default, source: "default" });
    }
    if (placed.under === undefined) known[placed.field] = read.at(-1)!.value;
  }
  // Defaults computed from other settings (the database beside the data folder, the patience as
  // long as the approval window), in declaration order, once every given value is known.
  for (const [i, entry] of read.entries()) {
    if (!entry.computed) continue;
    const value = (entry.setting.default as (k: typeof known) => unknown)(known);
    read[i] = { field: entry.field, setting: entry.setting, value, source: "default" };
    if (entry.under === undefined) known[entry.field] = value;
  }
  const top: Record<string, unknown> = {};
  const webhooks: Record<string, unknown> = {};
  for (const { field, under, value } of read) (under === "webhooks" ? webhooks : top)[field] = value;
  const config = { ...top, webhooks, ...overrides } as Config;
  check(config);
  return { config, read, warnings };
}

/** The rules that span two settings. */
function check(config: Config): void {
  const short = windowUnderFloor(config.approvalWindows, config.approvalWindowMs);
  if (short !== undefined) throw new ConfigError(`CROWS_APPROVAL_WINDOWS "${short}" must be from a minute to a day`);
  if (config.readTokens.length > 0 && config.token === undefined) {
    throw new ConfigError(
      "CROWS_READ_TOKENS needs CROWS_TOKEN too: without an owner token nothing is asked, so read-only tokens would mean nothing",
    );
  }
  if (config.token !== undefined && config.readTokens.includes(config.token)) {
    throw new ConfigError("CROWS_READ_TOKENS must not contain CROWS_TOKEN");
  }
  if (!isLoopbackHost(config.host) && config.token === undefined) {
    throw new ConfigError(
      `CROWS_HOST=${config.host} is reachable from other machines; set CROWS_TOKEN to a long random secret first (docs/security.md)`,
    );
  }
}

/**
 * One setting alone, for a command that needs only it (the data folder, the owner's token) and
 * must work while another setting is bad: its value, its default, or its one-line ConfigError.
 */
export function readOne<V>(env: Env, setting: Setting<V>): V {
  const raw = env[setting.env];
  if (raw === undefined || raw.trim() === "")
    return typeof setting.default === "function" ? (setting.default as (k: object) => V)({}) : setting.default;
  const parsed = setting.kind.zod.safeParse(raw);
  if (!parsed.success) throw new ConfigError(badLine(setting.env, parsed.error.issues[0]!, raw));
  return parsed.data as V;
}
