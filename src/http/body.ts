// Request bodies, read once with one size limit for every endpoint (REST and GraphQL alike, so a
// GraphQL variable cannot be larger than a REST body). A body over the limit is a 413; the rest of
// it is read and dropped first (up to a cap or a time), so a client that sends it all gets the
// answer instead of a reset, and the connection closes so nothing half-read is left on it. A client
// that declared a length and waits before sending (or sends slowly) gets the answer at the cap or
// the time, then the close: never a close with no answer.
import type http from "node:http";
import { HttpError } from "./http-error.ts";
import { decodeBody, refuseUnstorable, unstorable } from "./unstorable-text.ts";
import { refuseTooDeep } from "./json-depth.ts";

export const MAX_BODY_BYTES = 1_000_000;
/** How much of an oversized body is drained before answering; past it the answer goes at once. */
const DRAIN_CAP_BYTES = 16_000_000;
const DRAIN_TIMEOUT_MS = 3_000;

/** The 413 for a body over the limit; Connection: close, since the rest of the body is not wanted. */
export function tooLarge(): HttpError {
  return new HttpError(
    413,
    `The body is larger than ${MAX_BODY_BYTES} bytes.`,
    { limit_bytes: MAX_BODY_BYTES },
    { connection: "close" },
  );
}

/** The declared length, when it is over the limit, refused before a byte is read. */
export function declaredTooLarge(req: http.IncomingMessage): boolean {
  const declared = Number(req.headers["content-length"] ?? "0");
  return Number.isFinite(declared) && declared > MAX_BODY_BYTES;
}

/**
 * Reads and drops what is left of the body, so a refusal reaches the client before the close.
 * Whether the whole body was read: when not (past the cap or the time), the answer must close the
 * connection, since the rest of the body is still on it.
 */
export async function drain(req: http.IncomingMessage): Promise<boolean> {
  if (req.complete) return true;
  if (req.destroyed) return false;
  return new Promise<boolean>((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      req.off("data", count);
      req.off("end", done);
      req.off("error", done);
      req.off("close", done);
      resolve(req.complete);
    };
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DRAIN_CAP_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_TIMEOUT_MS);
    req.on("data", count);
    req.once("end", done);
    req.once("error", done);
    req.once("close", done);
    req.resume();
  });
}

/** The whole body; a 413 HttpError (after draining) when it is over MAX_BODY_BYTES. */
export async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  if (declaredTooLarge(req)) {
    await drain(req);
    throw tooLarge();
  }
  // Plain listeners, not for-await: leaving a for-await early destroys the socket, and the 413
  // must still reach the client.
  const body = await new Promise<Buffer | "too large">((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      cleanup();
      resolve("too large");
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new HttpError(400, `The body could not be read: ${error.message}`));
    };
    const onClose = () => {
      cleanup();
      reject(new HttpError(400, "The client went away before the body was complete."));
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("error", onError);
    req.once("close", onClose);
  });
  if (body === "too large") {
    await drain(req);
    throw tooLarge();
  }
  return body;
}

/**
 * The body parsed as JSON; a 400 when it is empty, not UTF-8, nested past MAX_JSON_DEPTH (checked on
 * the text, before it is parsed), not JSON, or holds text no store can keep.
 */
export async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const text = decodeBody(await readBody(req));
  if (text.trim() === "") throw new HttpError(400, "The body is empty; send a JSON object.");
  refuseTooDeep(text, "The body");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, "The body is not valid JSON.");
  }
  refuseUnstorable(body);
  return body;
}

/**
 * A decide page's form (application/x-www-form-urlencoded, the one non-JSON body the server takes,
 * and only on a decide link): its fields, none for a bare button; null when it is not text we keep.
 */
export async function readForm(req: http.IncomingMessage): Promise<URLSearchParams | null> {
  try {
    const text = decodeBody(await readBody(req));
    return unstorable(text) ? null : new URLSearchParams(text);
  } catch {
    return null;
  }
}
