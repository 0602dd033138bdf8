// The kinds of value a setting can hold, each a zod schema from the variable's text to its typed
// value, with the rule a bad value breaks (the error line reads `<NAME> <rule>, got "<text>"`)
// and the words the generated docs show. A kind that knows better says its own line through a
// custom issue (a token's line never repeats the secret).
import { z } from "zod";

export interface Kind<T> {
  /** From the variable's text (never blank: a blank variable is unset) to the value. */
  readonly zod: z.ZodType<T, string>;
  /** What a bad value breaks, after the name: "must be a whole number from 1 to 50". */
  readonly rule: string;
  /** The docs' "type" column: "whole number", "ms", "list of origins". */
  readonly type: string;
  /** The allowed range in words, for the docs ("100 to 600000", "1 or more"). */
  readonly bounds?: string;
  /** A value as the variable would spell it (docs and `crows config`). */
  readonly show: (value: T) => string;
}

const MAX = Number.MAX_SAFE_INTEGER;
const plain = (value: unknown) => String(value);

function parseUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/** Says a custom line (after the variable's name) for a bad value. */
function refuse(ctx: z.RefinementCtx, message: string): typeof z.NEVER {
  ctx.addIssue({ code: "custom", message });
  return z.NEVER;
}

/** A whole number in [min, max]; `unit` names what it counts (ms, bytes), shown in the docs. */
export function whole(min: number, max = MAX, unit?: "ms" | "bytes"): Kind<number> {
  return {
    // Number() as before: " 5", "1e3" and "0x10" read as whole numbers.
    zod: z.string().pipe(z.coerce.number<string>().int().min(min).max(max)),
    rule: `must be a whole number from ${min} to ${max}`,
    type: unit ?? "whole number",
    bounds: max === MAX ? `${min} or more` : `${min} to ${max}`,
    show: plain,
  };
}

/** A duration in milliseconds. */
export const ms = (min: number, max = MAX) => whole(min, max, "ms");

/** A number strictly between two bounds. */
export function between(low: number, high: number): Kind<number> {
  return {
    zod: z.string().pipe(z.coerce.number<string>().gt(low).lt(high)),
    rule: `must be a number above ${low} and below ${high}`,
    type: "number",
    bounds: `above ${low}, below ${high}`,
    show: plain,
  };
}

/** A number of seconds, 0 or more (only the deprecated `_S` names read these). */
export const seconds: Kind<number> = {
  zod: z.string().pipe(z.coerce.number<string>().min(0)),
  rule: "must be a number of seconds, 0 or more",
  type: "seconds",
  show: plain,
};

/** One of a few words; `quoted` quotes them in the rule (`must be "offline" or "systemone"`). */
export function oneOf<const W extends string>(words: readonly W[], quoted = false): Kind<W> {
  const shown = words.map((w) => (quoted ? JSON.stringify(w) : w));
  return {
    zod: z
      .string()
      .trim()
      .pipe(z.enum(words as unknown as [W, ...W[]])),
    rule: `must be ${shown.slice(0, -1).join(", ")} or ${shown.at(-1)}`,
    type: words.join(" | "),
    show: plain,
  };
}

/** 0 or 1, read as false or true. */
export const flag: Kind<boolean> = {
  zod: z
    .string()
    .trim()
    .pipe(z.enum(["0", "1"]))
    .transform((v) => v === "1"),
  rule: "must be 0 or 1",
  type: "0 | 1",
  show: (v) => (v ? "1" : "0"),
};

/** Free text, trimmed. */
export const text: Kind<string> = { zod: z.string().trim(), rule: "must be text", type: "text", show: plain };

/** Comma-separated parts, trimmed, blanks dropped. */
function parts(raw: string): string[] {
  return raw
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

// A token travels in a header and a cookie: printable ASCII without separators, long enough to guess never.
const TOKEN_SHAPE = /^[A-Za-z0-9._~+/=-]{16,512}$/;
// The line never repeats the value: it is a secret.
const TOKEN_RULE = "must be 16 to 512 characters of A-Z a-z 0-9 . _ ~ + / = - (generate one: openssl rand -hex 32)";

/** An access token. */
export const token: Kind<string> = {
  zod: z
    .string()
    .trim()
    .transform((t, ctx) => (TOKEN_SHAPE.test(t) ? t : refuse(ctx, TOKEN_RULE))),
  rule: TOKEN_RULE,
  type: "token (16 to 512 of `A-Za-z0-9._~+/=-`)",
  show: plain,
};

/** Comma-separated access tokens. */
export const tokens: Kind<string[]> = {
  zod: z.string().transform((raw, ctx) => {
    const list = parts(raw);
    return list.every((t) => TOKEN_SHAPE.test(t)) ? list : refuse(ctx, TOKEN_RULE);
  }),
  rule: TOKEN_RULE,
  type: "list of tokens",
  show: (v) => v.join(","),
};

/** Comma-separated web origins (scheme://host[:port]), lower-cased. */
export const origins: Kind<string[]> = {
  zod: z.string().transform((raw, ctx) => {
    const out: string[] = [];
    for (const part of parts(raw)) {
      const url = parseUrl(part);
      if (!url || !/^https?:$/.test(url.protocol) || url.origin !== part.replace(/\/$/, "").toLowerCase())
        return refuse(
          ctx,
          `lists origins like http://localhost:5173 (scheme, host, optional port; no path), got ${JSON.stringify(part)}`,
        );
      out.push(url.origin);
    }
    return out;
  }),
  rule: "lists origins like http://localhost:5173 (scheme, host, optional port; no path)",
  type: "list of origins",
  show: (v) => v.join(","),
};

/** Comma-separated host names (no scheme, no port), lower-cased. */
export const hostNames: Kind<string[]> = {
  zod: z.string().transform((raw, ctx) => {
    const names = parts(raw).map((h) => h.toLowerCase());
    const bad = names.find((name) => !/^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/.test(name));
    return bad === undefined
      ? names
      : refuse(ctx, `lists host names without scheme or port, got ${JSON.stringify(bad)}`);
  }),
  rule: "lists host names without scheme or port",
  type: "list of host names",
  show: (v) => v.join(","),
};

/** Comma-separated whole milliseconds, each 0 or more (a retry schedule). */
export const msList: Kind<number[]> = {
  zod: z.string().transform((raw, ctx) => {
    const texts = raw.split(",").map((part) => part.trim());
    const values = texts.map(Number);
    if (texts.some((t) => t === "") || values.some((v) => !Number.isInteger(v) || v < 0))
      return refuse(
        ctx,
        `is comma-separated milliseconds before each attempt, like 0,5000,300000, got ${JSON.stringify(raw)}`,
      );
    return values;
  }),
  rule: "is comma-separated milliseconds before each attempt, like 0,5000,300000",
  type: "list of ms",
  show: (v) => v.join(","),
};

/** Comma-separated seconds (the deprecated CROWS_WEBHOOK_RETRY_SCHEDULE). */
export const secondsList: Kind<number[]> = {
  zod: z.string().transform((raw, ctx) => {
    const texts = raw.split(",").map((part) => part.trim());
    const values = texts.map(Number);
    if (texts.some((t) => t === "") || values.some((s) => !Number.isFinite(s) || s < 0))
      return refuse(ctx, `is comma-separated seconds before each attempt, like 0,5,300, got ${JSON.stringify(raw)}`);
    return values;
  }),
  rule: "is comma-separated seconds before each attempt, like 0,5,300",
  type: "list of seconds",
  show: (v) => v.join(","),
};

/** The http(s) address the owner reaches this server at, without a trailing slash. */
export const publicUrl: Kind<string> = {
  zod: z
    .string()
    .trim()
    .transform((raw, ctx) => {
      const url = parseUrl(raw);
      if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash)
        return refuse(
          ctx,
          `is the http(s) address the owner reaches this server at, like https://crows.example.com, got ${JSON.stringify(raw)}`,
        );
      return url.href.replace(/\/$/, "");
    }),
  rule: "is the http(s) address the owner reaches this server at, like https://crows.example.com",
  type: "url",
  show: plain,
};
