// Standard Webhooks signing (docs/webhooks.md "Verifying a signature"): a secret is whsec_<base64 of
// the key>; a signature is v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">, and
// during a rotation's grace every valid secret signs, the signatures separated by spaces.
import { createHmac, randomBytes } from "node:crypto";

const PREFIX = "whsec_";

/** A fresh secret: 24 random bytes, the length Svix issues. Shown to the owner once. */
export function newSecret(): string {
  return PREFIX + randomBytes(24).toString("base64");
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
}

/** The webhook-signature header for one send: one `v1,` signature per secret, space-separated. */
export function signatureHeader(secrets: readonly string[], id: string, timestampS: number, body: string): string {
  return secrets
    .map((secret) => `v1,${createHmac("sha256", keyOf(secret)).update(`${id}.${timestampS}.${body}`).digest("base64")}`)
    .join(" ");
}
