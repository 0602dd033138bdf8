// What one setting is: its variable, its group, its kind of value (kinds.ts), its default, who
// sets it, whether it is a secret, one line on what it does, and the old name it replaces. The
// group files (server.ts, storage.ts, ...) declare every setting with `setting`; the parsing, the
// typed Config, the docs tables and `crows config` all come from those declarations.
import type { Kind } from "./kinds.ts";

export const GROUPS = ["server", "storage", "models", "classifier", "flock", "streams", "webhooks"] as const;
export type Group = (typeof GROUPS)[number];

/** A bad setting: the start stops with this one line, naming the variable (exit 3). */
export class ConfigError extends Error {}

/** The values read so far, by Config field: what a derived default is computed from. */
export type Known = Readonly<Record<string, unknown>>;

export interface Setting<V> {
  readonly env: string;
  readonly group: Group;
  readonly kind: Kind<NonNullable<V>>;
  /** `owner`: what an owner sets (the README names them); `tuning`: a knob with a default that serves. */
  readonly audience: "owner" | "tuning";
  /** `whole`: never printed; `password`: a URL whose password is never printed. */
  readonly secret?: "whole" | "password";
  /** The value when the variable is unset or blank. */
  readonly default: V | ((known: Known) => V);
  /** The default in words, when it is computed or unset ("the listen URL"). */
  readonly defaultText?: string;
  /** One line: what it does (the docs' "meaning" column). */
  readonly describe: string;
  /** The name it had, still read for one release with a warning. */
  readonly deprecated?: Deprecated<V>;
}

export interface Deprecated<V> {
  readonly env: string;
  readonly kind: Kind<any>;
  /** The old value in the new unit. */
  readonly convert: (old: any) => NonNullable<V>;
}

/** Declares a setting (keeps V as the declaration's own type). */
export const setting = <V>(declared: Setting<V>): Setting<V> => declared;

export type Settings = Readonly<Record<string, Setting<any>>>;

/** The typed values of a table of settings, by field. */
export type Values<S extends Settings> = { -readonly [K in keyof S]: S[K] extends Setting<infer V> ? V : never };
