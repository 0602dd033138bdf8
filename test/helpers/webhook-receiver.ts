// A webhook receiver for tests: a real HTTP server on loopback that verifies every delivery's
// signature with the standardwebhooks package (against every secret it is told of) and records
// what arrived. Its answer is scripted per delivery: a status, a Retry-After, a hang.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface Received {
  id: string;
  timestamp: number;
  signature: string;
  body: any;
  raw: string;
  /** Which of the receiver's secrets verified it (every one that did). */
  verifiedWith: string[];
  at: number;
  /** Every header as it arrived (an A2A push's authorization and content-type). */
  headers: http.IncomingHttpHeaders;
}

export type Answer = { status?: number; headers?: Record<string, string>; hang?: boolean };

export interface Receiver {
  url: string;
  received: Received[];
  /** Secrets to verify with; a delivery no secret verifies fails the test (see `unverified`). */
  secrets: string[];
  unverified: string[];
  /** The webhook-ids answered with a 2xx, in order: what the sender may count as delivered. */
  acked: string[];
  /** How to answer the n-th request (from 0); default 204. */
  answer: (request: { id: string; n: number; body: any }) => Answer;
  waitFor(check: (received: Received[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(secrets: string[] = []): Promise<Receiver> {
  let n = 0;
  const hanging = new Set<http.ServerResponse>();
  const waiters = new Set<() => void>();
  const receiver: Receiver = {
    url: "",
    received: [],
    secrets,
    unverified: [],
    acked: [],
    answer: () => ({}),
    async waitFor(check, timeoutMs = 20_000, what = "deliveries") {
      const deadline = Date.now() + timeoutMs;
      while (!check(receiver.received)) {
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for ${what}; got ${receiver.received.map((r) => `${r.body?.type}:${r.id}`).join(", ")}`,
          );
        await new Promise<void>((resolve) => {
          const wake = () => (waiters.delete(wake), resolve());
          waiters.add(wake);
          setTimeout(wake, 100);
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const headers = {
        "webhook-id": String(req.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
      };
      const verifiedWith = receiver.secrets.filter((secret) => {
        try {
          new Webhook(secret).verify(raw, headers);
          return true;
        } catch {
          return false;
        }
      });
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
      if (verifiedWith.length === 0) receiver.unverified.push(headers["webhook-id"]);
      receiver.received.push({
        id: headers["webhook-id"],
        timestamp: Number(headers["webhook-timestamp"]),
        signature: headers["webhook-signature"],
        body,
        raw,
        verifiedWith,
        at: Date.now(),
        headers: req.headers,
      });
      for (const wake of [...waiters]) wake();
      const answer = receiver.answer({ id: headers["webhook-id"], n: n++, body });
      if (answer.hang) {
        hanging.add(res);
        return;
      }
      const status = answer.status ?? 204;
      res.writeHead(status, answer.headers ?? {}).end();
      if (status >= 200 && status < 300) receiver.acked.push(headers["webhook-id"]);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/** Reads until `done` holds (a generous deadline), then returns the last read: the caller asserts on it. */
export async function readUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    value = await read();
  }
  return value;
}
