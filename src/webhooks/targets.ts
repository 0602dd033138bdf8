// Where a webhook may be sent (docs/security.md "Webhooks"). Checked when an endpoint is added and
// again, on every address a name resolves to, when each send connects (so a name that later
// resolves somewhere else is refused too):
// - link-local (169.254/16, fe80::/10: cloud metadata lives there) and unspecified (0.0.0.0, ::)
//   addresses: always refused;
// - loopback and private (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7): only with
//   CROWS_WEBHOOK_ALLOW_PRIVATE=1;
// - the scheme: https, or http to a loopback or private target (a receiver on the same machine or
//   network); a public target over plain http is refused.
import { isIP } from "node:net";
import { BadInputError } from "../base/errors.ts";

export type AddressClass = "public" | "private" | "loopback" | "link-local" | "unspecified";

function v4Class(address: string): AddressClass {
  const [a, b] = address.split(".").map(Number) as [number, number];
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 169 && b === 254) return "link-local";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127))
    return "private";
  return "public";
}

/** What kind of address `address` (an IP literal) is. */
export function classify(address: string): AddressClass {
  const ip = address.replace(/^\[|\]$/g, "").toLowerCase();
  if (isIP(ip) === 4) return v4Class(ip);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
  if (mapped) return v4Class(mapped[1]!);
  // The URL parser writes a mapped IPv4 address in hex: ::ffff:a9fe:a9fe is 169.254.169.254.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(ip);
  if (hex) {
    const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
    return v4Class(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  if (ip === "::" || /^0*(:0*)*$/.test(ip.replace(/::/, ":"))) return "unspecified";
  if (ip === "::1") return "loopback";
  if (/^fe[89ab]/.test(ip)) return "link-local";
  if (/^f[cd]/.test(ip)) return "private";
  return "public";
}

/** Refuses an address class the rules forbid; the message names the rule, never the URL's secrets. */
export function refusalOf(kind: AddressClass, allowPrivate: boolean): string | undefined {
  if (kind === "link-local") return "link-local addresses are never webhook targets";
  if (kind === "unspecified") return "the unspecified address is never a webhook target";
  if ((kind === "loopback" || kind === "private") && !allowPrivate)
    return `${kind} addresses are webhook targets only with CROWS_WEBHOOK_ALLOW_PRIVATE=1`;
  return undefined;
}

/** The URL an endpoint may have: a 400 (BadInputError) naming the rule it breaks. */
export function checkTarget(raw: unknown, allowPrivate: boolean): URL {
  if (typeof raw !== "string" || raw.trim() === "") throw new BadInputError('"url" must be an http(s) URL.');
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new BadInputError('"url" must be an absolute http(s) URL.');
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new BadInputError('"url" must use https (or http to a loopback or private receiver).');
  if (raw.length > 2000) throw new BadInputError('"url" must be at most 2000 characters.');
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const kind: AddressClass = isIP(host)
    ? classify(host)
    : host === "localhost" || host.endsWith(".localhost")
      ? "loopback"
      : "public";
  const refusal = refusalOf(kind, allowPrivate);
  if (refusal) throw new BadInputError(`That URL is refused: ${refusal}.`);
  // Plain http only to loopback or private receivers (by address or localhost): the body and its
  // decide links must not cross the internet in clear. Any other name needs https.
  if (url.protocol === "http:" && kind === "public")
    throw new BadInputError("That URL is refused: a receiver that is not loopback or private must use https.");
  return url;
}
