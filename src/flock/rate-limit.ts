// Abuse limits (docs/flock.md §5), keyed by requester for lists and by author for nest posts.
// More than 5 submissions in 60 seconds earns a strike; 3 strikes within 10 minutes prank the
// poster: a 429 with a playful line and a cooldown of 60 s, doubling on each repeat prank, capped at
// an hour. During a cooldown every submission is refused with the seconds left. State is stored,
// so a restart does not forgive anyone. Names are compared by requesterKey, so "ANA", "ana." and
// "ana" with a zero-width space are one requester, not three fresh ones.
//
// Only what a poster chooses to send is counted. The replies the nest's must-respond loop writes
// (claims, delivers, declines, Quill's and Boss's replies) and the Sentry's flag and ask never come
// here: the loop bounds them to one per request, so they cannot flood, and counting them would
// prank a crow for answering the requests it was sent (src/nests/chat.ts, InternalPost.unmetered).
import type { PrismaClient } from "../generated/prisma/client.ts";
import { KeyedLock } from "../base/util/keyed-lock.ts";
import { numberArray } from "../base/util/json-column.ts";

export const WINDOW_MS = 60_000;
export const MAX_PER_WINDOW = 5;
export const STRIKE_WINDOW_MS = 10 * 60_000;
export const STRIKES_TO_PRANK = 3;
export const BASE_COOLDOWN_S = 60;
export const MAX_COOLDOWN_S = 3600;

const PRANK_LINES = [
  "The flock has flown off to count shiny buttons. Try again later.",
  "Caw! Every crow just remembered an urgent appointment on a distant roof.",
  "Your list has been hidden under a very convincing pile of leaves.",
  "The Sentry says the sky is full. Come back when there is room.",
  "The crows are holding a meeting about you. It may take a while.",
];

// Invisible characters a renamer can slip into a name: format characters (zero-width spaces and
// joiners, the BOM, bidi controls, the soft hyphen), controls, the combining grapheme joiner, the
// Mongolian vowel separator and the Hangul fillers that render as nothing.
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each invisible code point is listed alone, on purpose
const INVISIBLE = /[\p{Cf}\p{Cc}\u034F\u180E\u115F\u1160\u3164\uFFA0]/gu;
// Punctuation, symbols and spaces at either end ("ana.", "(ana)", "~ana~", "ana!!").
const SURROUNDING = /^[\p{P}\p{S}\p{Z}\s]+|[\p{P}\p{S}\p{Z}\s]+$/gu;

/**
 * The name the rate limit keys on: NFKC (full-width and styled letters become plain ones), case
 * folded (upper then lower, so ß and SS meet), invisible characters removed, surrounding
 * punctuation and spaces stripped, inner runs of spaces made one. A name with nothing left keys on
 * "" (all such names share one bucket).
 */
export function requesterKey(name: string): string {
  return name
    .normalize("NFKC")
    .replace(INVISIBLE, "")
    .toUpperCase()
    .toLowerCase()
    .normalize("NFKC")
    .replace(SURROUNDING, "")
    .replace(/[\p{Z}\s]+/gu, " ");
}

export type Admission =
  | { admitted: true }
  | {
      admitted: false;
      message: string;
      cooldownS: number /** true when this very submission earned the prank */;
      pranked: boolean;
    };

export class RateLimiter {
  private readonly lock = new KeyedLock();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits one submission from `name` (compared as requesterKey(name)). */
  admit(name: string): Promise<Admission> {
    const key = requesterKey(name);
    return this.lock.run(key, () => this.admitNow(key));
  }

  private async admitNow(key: string): Promise<Admission> {
    const now = this.now();
    const row = await this.prisma.requester.findUnique({ where: { name: key } });
    const pranks = row?.pranks ?? 0;
    if (row?.cooldownUntil && row.cooldownUntil.getTime() > now) {
      const left = Math.ceil((row.cooldownUntil.getTime() - now) / 1000);
      return { admitted: false, message: lineFor(key, pranks), cooldownS: left, pranked: false };
    }
    const recent = numberArray(row?.recent).filter((t) => now - t < WINDOW_MS);
    const strikes = numberArray(row?.strikes).filter((t) => now - t < STRIKE_WINDOW_MS);
    recent.push(now);
    if (recent.length > MAX_PER_WINDOW) strikes.push(now);
    if (strikes.length >= STRIKES_TO_PRANK) {
      const cooldownS = Math.min(BASE_COOLDOWN_S * 2 ** pranks, MAX_COOLDOWN_S);
      const state = {
        recent: "[]",
        strikes: "[]",
        pranks: pranks + 1,
        cooldownUntil: new Date(now + cooldownS * 1000),
      };
      await this.prisma.requester.upsert({ where: { name: key }, create: { name: key, ...state }, update: state });
      return { admitted: false, message: lineFor(key, pranks + 1), cooldownS, pranked: true };
    }
    const state = { recent: JSON.stringify(recent), strikes: JSON.stringify(strikes) };
    await this.prisma.requester.upsert({ where: { name: key }, create: { name: key, ...state }, update: state });
    return { admitted: true };
  }
}

function lineFor(key: string, pranks: number): string {
  let hash = pranks;
  for (const ch of key) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PRANK_LINES[hash % PRANK_LINES.length]!;
}
