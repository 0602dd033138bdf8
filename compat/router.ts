// The one router of the REST API: every route record (compat/route.ts) under /api, the webhook
// routes included; the node adapter in src/server/http.ts turns a request into a CompatRequest and
// writes the CompatResponse back, and the access gate asks the matched record for its scope.
import type { App } from "../src/app.ts";
import { HttpError } from "../src/http/http-error.ts";
import type { Principal } from "../src/access/principal.ts";
import type { SseBody, SseInit } from "./sse.ts";
import type { Tx } from "../src/storage/events/types.ts";

export interface CompatRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | undefined>;
  params: Record<string, string>;
  /** The parsed JSON body; a 400 HttpError when it is not JSON. */
  json(): Promise<unknown>;
  /** A decide page's form fields (only on a page route); null when they cannot be read. */
  form?(): Promise<URLSearchParams | null>;
  signal: AbortSignal;
  /** Who the access gate admitted (src/server/access.ts): its actor goes on every event this causes. */
  principal: Principal;
  /** Under an Idempotency-Key (compat/idempotent.ts): records the answer inside a write's own transaction. */
  idempotency?: { recordIn(tx: Tx, answer: { status: number; body: unknown }): Promise<void> };
}

export type CompatResponse =
  | { status: number; json?: unknown; headers?: Record<string, string> }
  | { status: number; page: string; headers: Record<string, string> }
  | { stream: SseBody; init: SseInit };

/** What the router serves: a record (compat/route.ts) is one, with its scope and schemas. */
export interface Route {
  method: "GET" | "POST" | "DELETE";
  /** A path with `{name}` segments, e.g. /api/nests/{nest_id}/messages. */
  path: string;
  /** A `{name}` segment's own pattern (a regex source); any one segment otherwise. */
  segments?: Record<string, string>;
  /**
   * An HTML page for a person (a decide link), not the JSON API: a GET answers HEAD too (headers
   * only), the path matches exactly (no trailing slash), and another method is a bare 405.
   */
  page?: true;
  handle(app: App, request: CompatRequest): Promise<CompatResponse>;
}

/** A 405; `bare` on a page's path, where the answer has no JSON body. */
export class MethodNotAllowed extends HttpError {
  constructor(
    method: string,
    path: string,
    allow: string,
    readonly bare: boolean,
  ) {
    super(405, `${method} is not allowed on ${path}.`, {}, { allow });
  }
}

type Compiled<R> = R & { pattern: RegExp; names: string[] };

export class Router<R extends Route = Route> {
  private readonly routes: Compiled<R>[] = [];

  add(...routes: R[]): this {
    for (const route of routes) {
      const names: string[] = [];
      const source = route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
        names.push(name);
        return `(${route.segments?.[name] ?? "[^/]+"})`;
      });
      this.routes.push({ ...route, pattern: new RegExp(`^${source}${route.page ? "" : "/?"}$`), names });
    }
    return this;
  }

  /** Every route, in the order added (tests walk them: every POST is checked alike). */
  list(): readonly R[] {
    return this.routes;
  }

  /** The routes whose path matches, whatever their method (the access gate reads them for a 405). */
  onPath(path: string): R[] {
    return this.routes.filter((route) => route.pattern.test(path));
  }

  /** The route that serves this method on this path (a page's GET serves HEAD), if one does. */
  find(method: string, path: string): R | undefined {
    return this.routes.find((route) => route.pattern.test(path) && serves(route, method));
  }

  /** The route and its params; a 404 or 405 HttpError when nothing matches. */
  match(method: string, path: string): { route: R; params: Record<string, string> } {
    const allowed: string[] = [];
    let pages = true;
    for (const route of this.routes) {
      const m = route.pattern.exec(path);
      if (!m) continue;
      allowed.push(route.method, ...(route.page && route.method === "GET" ? ["HEAD"] : []));
      pages &&= route.page === true;
      if (!serves(route, method)) continue;
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => {
        params[name] = decodeSegment(m[i + 1] ?? "");
      });
      return { route, params };
    }
    if (allowed.length > 0) throw new MethodNotAllowed(method, path, allowed.join(", "), pages);
    throw new HttpError(404, `No such endpoint: ${method} ${path}.`);
  }
}

const serves = (route: Route, method: string): boolean =>
  route.method === method || (route.page === true && route.method === "GET" && method === "HEAD");

/** A path segment, percent-decoded; a 400 (not a crash) when its encoding is broken. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "The path has a malformed percent-encoding.");
  }
}
