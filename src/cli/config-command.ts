// `crows config`: the settings this folder's server would start with, each with its source (its
// default, the environment, or the old name it was read from), secrets masked. A bad value is the
// same one line the server would stop with, and the same exit 3. Read from the declarations in
// src/base/settings/, like the parsing and docs/configuration.md.
import { ConfigError, type Read, readSettings } from "../base/config.ts";
import { EXIT } from "../ops/exit.ts";
import { CommandError } from "./commands.ts";

type Env = Record<string, string | undefined>;

/** What stands for a secret that is set. */
export const MASK = "********";

/**
 * A value as `crows config` prints it: as its variable would spell it (`0,5000,300000`, `thread`),
 * null when unset (or an empty list); a secret never, a URL's password never.
 */
export function shown({ setting, value }: Pick<Read, "setting" | "value">): string | null {
  const text = value === undefined ? "" : setting.kind.show(value);
  if (text === "") return null; // unset, or an empty list: as the variable would be
  if (setting.secret === "whole") return MASK;
  if (setting.secret === "password") return withoutPassword(text);
  return text;
}

function withoutPassword(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return MASK; // not a URL we can read: it may hold anything
  }
  // libpq also takes the password as a parameter: postgresql://host/db?password=...
  if (url.password === "" && !url.searchParams.has("password")) return raw;
  if (url.password !== "") url.password = MASK;
  if (url.searchParams.has("password")) url.searchParams.set("password", MASK);
  return url.href;
}

function settingsOf(env: Env) {
  try {
    return readSettings(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new CommandError(EXIT.cannotRun, "config", error.message);
    throw error;
  }
}

/** The effective settings, by variable: `{"settings":{"CROWS_PORT":{"value":"7717","source":"default"},...},"warnings":[]}`. */
export function showConfig(env: Env = process.env) {
  const { read, warnings } = settingsOf(env);
  const settings: Record<string, { value: string | null; source: string }> = {};
  for (const entry of read) settings[entry.setting.env] = { value: shown(entry), source: entry.source };
  return { settings, warnings };
}

/** The same as aligned lines for a person: group, variable, value, source. */
export function configTable(env: Env = process.env): string {
  const { read, warnings } = settingsOf(env);
  const rows = read.map((entry) => {
    const value = shown(entry);
    return [entry.setting.group, entry.setting.env, value ?? "-", entry.source];
  });
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((cell, i) => (i < 3 ? cell.padEnd(widths[i]!) : cell)).join("  "));
  return [...lines, ...warnings.map((w) => `warning: ${w}`)].join("\n");
}
