// Starts a real crows server on an ephemeral loopback port with its own data folder, and can
// restart it on the same folder (the durable log and pending approvals must survive that).
import { mkdtempSync, rmSync } from "node:fs";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import { loadConfig, type Config } from "../src/base/config.ts";
import { createApp, type App, type AppDeps } from "../src/app.ts";
import { startServer, type RunningServer } from "../src/server/http.ts";

export interface TestServer {
  app: App;
  /** The node server itself, for a test that must see the server's side of a connection. */
  http: http.Server;
  url: string;
  dataDir: string;
  /** JSON request helper: returns status, parsed body and raw text. */
  request(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; text: string; headers: Headers }>;
  post(path: string, body?: unknown): Promise<{ status: number; body: any; text: string; headers: Headers }>;
  get(path: string): Promise<{ status: number; body: any; text: string; headers: Headers }>;
  /** Stops this server and starts a new one on the same data folder (a new port); `whileDown` runs in between. */
  restart(overrides?: {
    env?: Record<string, string>;
    deps?: AppDeps;
    whileDown?: () => Promise<void>;
  }): Promise<TestServer>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  deps?: AppDeps;
  dataDir?: string;
}

const quiet = () => {};

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), "crows-test-"));
  const env = { CROWS_PORT: "0", CROWS_DATA_DIR: dataDir, ...options.env };
  const config: Config = loadConfig(env);
  const app = await createApp(config, { logLine: quiet, ...options.deps });
  let server: RunningServer;
  try {
    server = await startServer(app);
  } catch (error) {
    await app.close();
    throw error;
  }
  const request: TestServer["request"] = async (method, p, body, headers = {}) => {
    const response = await fetch(server.url + p, {
      method,
      headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed, text, headers: response.headers };
  };
  const close = async () => {
    await server.close();
    await app.close();
  };
  return {
    app,
    http: server.server,
    url: server.url,
    dataDir,
    request,
    post: (p, body) => request("POST", p, body),
    get: (p) => request("GET", p),
    restart: async (overrides = {}) => {
      await close();
      await overrides.whileDown?.();
      return startTestServer({
        env: { ...options.env, ...overrides.env },
        deps: overrides.deps ?? options.deps,
        dataDir,
      });
    },
    close: async () => {
      await close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
