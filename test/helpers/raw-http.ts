// Raw HTTP over a TCP socket, for what fetch will not send (broken request targets, a Host of our
// choosing, a body larger than it says) and for watching what happens to the connection after.
import net from "node:net";

export interface RawResponse {
  /** 0 when no status line arrived. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The bytes as received, possibly several responses. */
  text: string;
  /** True when the server closed the connection; false when we gave up waiting. */
  closed: boolean;
}

export function parseRaw(text: string, closed: boolean): RawResponse {
  const end = text.indexOf("\r\n\r\n");
  const head = end === -1 ? text : text.slice(0, end);
  const [statusLine = "", ...lines] = head.split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end === -1 ? "" : text.slice(end + 4);
  if (headers["content-length"] !== undefined) body = body.slice(0, Number(headers["content-length"]));
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body, text, closed };
}

/** Writes `request` (all parts, in order) and reads until the server closes or `waitMs` passes. */
export function rawExchange(
  port: number,
  request: string | Buffer | (string | Buffer)[],
  waitMs = 5_000,
): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseRaw(Buffer.concat(chunks).toString("latin1"), closed));
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on("connect", () => {
      for (const part of Array.isArray(request) ? request : [request]) socket.write(part);
    });
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("end", () => finish(true));
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
  });
}

/** One keep-alive connection: send a request, wait for one whole response, send the next. */
export class RawConnection {
  private readonly socket: net.Socket;
  private buffer = "";
  private closed = false;
  private wake: (() => void) | undefined;
  private readonly gone: Promise<void>;

  constructor(port: number) {
    this.socket = net.connect(port, "127.0.0.1");
    this.socket.on("data", (chunk) => {
      this.buffer += chunk.toString("latin1");
      this.wake?.();
    });
    let ended!: () => void;
    this.gone = new Promise<void>((resolve) => (ended = resolve));
    const gone = () => {
      this.closed = true;
      this.wake?.();
      ended();
    };
    this.socket.on("close", gone);
    this.socket.on("error", gone);
  }

  /** Sends and resolves with the next complete response (a Content-Length body), or status 0 on timeout/close. */
  async send(request: string | Buffer, waitMs = 5_000): Promise<RawResponse> {
    this.socket.write(request);
    const deadline = Date.now() + waitMs;
    for (;;) {
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end !== -1) {
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(this.buffer.slice(0, end))?.[1] ?? "0");
        if (this.buffer.length >= end + 4 + length) {
          const text = this.buffer.slice(0, end + 4 + length);
          this.buffer = this.buffer.slice(end + 4 + length);
          return parseRaw(text, this.closed);
        }
      }
      if (this.closed || Date.now() > deadline) return { ...parseRaw(this.buffer, this.closed), status: 0 };
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
  }

  isClosed(): boolean {
    return this.closed;
  }

  /** True once the connection closes; false if it is still open after `timeoutMs`. */
  async closesWithin(timeoutMs: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stillOpen = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const closed = await Promise.race([this.gone.then(() => true as const), stillOpen]);
    clearTimeout(timer);
    return closed;
  }

  close(): void {
    this.socket.destroy();
  }
}
