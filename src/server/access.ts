// The access check: one gate in front of every path the server answers (the REST API, GraphQL, the
// console and its assets, health and metrics), so a rule here holds everywhere. In order:
//   1. Host: only this server's own loopback names and addresses, its listen address, and the names
//      in CROWS_PUBLIC_HOSTS (421 otherwise): a DNS-rebound page never gets an answer. Exactly one
//      Host header (400 for two or more).
//   2. Origin: a browser request from another origin is refused (403) unless CROWS_CORS_ORIGINS lists
//      it; listed origins get CORS headers (preflights answered here), unlisted ones never do.
//   3. Token: with CROWS_TOKEN set, a Bearer token or the crows_token cookie (401 otherwise: JSON,
//      or a small HTML page when a browser navigates here asking for text/html);
//      `GET /?token=` trades the token for the cookie. CROWS_TOKEN is the owner (every scope), a
//      named token (src/access/token-store.ts) holds its scopes, CROWS_READ_TOKENS read. The scope a
//      request needs (its route record's: src/server/route-scopes.ts) is checked here: a 403 naming it. GraphQL operations
//      are checked per operation (src/server/graphql/plugins/scopes.ts) against the principal set here.
//   4. Writes: a body over the limit is a 413, a body that is not application/json a 415.
// The rules and their reasons are in docs/security.md.
import { createHash, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import os from "node:os";
import type { Config } from "../base/config.ts";
import { HttpError } from "../http/http-error.ts";
import { declaredTooLarge, drain, tooLarge } from "../http/body.ts";
import { escapeHtml, sendHtmlPage } from "../http/html-page.ts";
import { missingScopeMessage, type Scope } from "../access/scopes.ts";
import { LINK_HOLDER, ROOT, type Principal } from "../access/principal.ts";
import type { TokenStore } from "../access/token-store.ts";
import type { Needed } from "./route-scopes.ts";
import type { TokenStreams } from "./token-streams.ts";

export const TOKEN_COOKIE = "crows_token";

export type { Principal };
/** CROWS_READ_TOKENS, the old form: read (and /metrics, as before) without a name. */
const LEGACY_READER: Principal = Object.freeze({
  actor: Object.freeze({ kind: "token" as const, token_name: "CROWS_READ_TOKENS" }),
  scopes: ["read", "metrics"] as Scope[],
});

const CORS_ALLOW_HEADERS =
  "authorization, content-type, accept, last-event-id, idempotency-key, x-graphql-yoga-csrf, x-graphql-event-stream-token";
const CORS_EXPOSE_HEADERS = "retry-after, content-type";
const CORS_MAX_AGE_S = "600";

const principals = new WeakMap<http.IncomingMessage, Principal>();

/** Who the gate admitted this request as (the owner when no token is configured). */
export function principalOf(req: http.IncomingMessage): Principal {
  return principals.get(req) ?? ROOT;
}

/** The refusal for a principal that lacks `scope`: a 403 naming it. */
export function lacksScope(scope: Scope): HttpError {
  return new HttpError(403, missingScopeMessage(scope), { scope });
}

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();

/** How many Host headers the request carried (rawHeaders is name, value, name, value, ...). */
function hostHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]!.length === 4 && rawHeaders[i]!.toLowerCase() === "host") count++;
  return count;
}

/** The hostname of a Host header (no port, IPv6 without brackets, lower case), or undefined. */
function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host.trim());
  if (!m) return undefined;
  return m[1]!.replace(/^\[|\]$/g, "").toLowerCase();
}

function cookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function isJson(contentType: string | undefined): boolean {
  const mediaType = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return mediaType === "application/json";
}

/** A decide page's form (its reason box): the one body that is not JSON, and only on a decide link. */
function isForm(contentType: string | undefined): boolean {
  const mediaType = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return mediaType === "application/x-www-form-urlencoded";
}

function hasBody(req: http.IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = Number(req.headers["content-length"] ?? "0");
  return !(Number.isFinite(length) && length === 0);
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** A browser navigating here (GET or HEAD asking for text/html by name), not an API client or a stream. */
function wantsPage(req: http.IncomingMessage): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  const accept = req.headers.accept ?? "";
  return accept.split(",").some((range) => range.split(";")[0]!.trim().toLowerCase() === "text/html");
}

/**
 * The 401 as a page the owner can read: what went wrong, how to open the console (/?token=<token>,
 * or the form, which does the same), and where the token comes from. Self-contained: no script,
 * no asset, nothing it was sent echoed back; its CSP allows only its inline style and a form to /.
 */
function sendTokenPage(req: http.IncomingMessage, res: http.ServerResponse, refusal: HttpError): void {
  const main = `<h1>crows: token needed</h1>
<p><strong>${escapeHtml(refusal.message)}</strong></p>
<p>This server runs with <code>CROWS_TOKEN</code> set. To open the console, open <code>/?token=&lt;token&gt;</code>
once in this browser, with the owner's token in place of <code>&lt;token&gt;</code> (or a named token the
owner made for you, which opens what its scopes allow). The server then keeps it in an HttpOnly cookie for this browser session and takes
it out of the address bar.</p>
<form method="get" action="/">
<p><label>Token <input type="password" name="token" autocomplete="off" required></label> <button type="submit">Open the console</button></p>
</form>
<p>API clients send <code>Authorization: Bearer &lt;token&gt;</code> instead.</p>`;
  sendHtmlPage(
    req,
    res,
    401,
    {
      title: "crows: token needed",
      main,
      style:
        "code{background:#f1f1f4;padding:0 .25em;border-radius:3px}input{font:inherit;padding:.3em;width:18rem}button{font:inherit;padding:.3em .8em}",
    },
    { ...refusal.headers, "referrer-policy": "no-referrer" },
  );
}

export class AccessGate {
  private readonly ownerDigest: Buffer | undefined;
  private readonly readerDigests: Buffer[];
  private readonly names: Set<string>;

  constructor(
    private readonly config: Config,
    /** The scope a request needs (src/server/route-scopes.ts over the route records). */
    private readonly scopeOf: (method: string, pathname: string) => Needed,
    private readonly tokens?: TokenStore,
    private readonly streams?: TokenStreams,
  ) {
    this.ownerDigest = config.token === undefined ? undefined : digest(config.token);
    this.readerDigests = config.readTokens.map(digest);
    this.names = new Set([
      "localhost",
      "127.0.0.1",
      "::1",
      ...config.publicHosts.map((h) => h.replace(/^\[|\]$/g, "")),
    ]);
    const listen = config.host.replace(/^\[|\]$/g, "").toLowerCase();
    if (listen === "0.0.0.0" || listen === "::") {
      // Listening everywhere: this machine's own addresses are its names (an address cannot be rebound).
      for (const addresses of Object.values(os.networkInterfaces())) {
        for (const a of addresses ?? []) this.names.add(a.address.toLowerCase());
      }
    } else {
      this.names.add(listen);
    }
  }

  /** Host, Origin, token and body checks; throws the HttpError to answer with. Sets CORS headers on res. */
  async admit(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<"continue" | "answered"> {
    // Node keeps the first of several Host headers; which one a proxy in front would use is anyone's
    // guess, so a request with more than one is refused (RFC 9112: a 400).
    if (hostHeaderCount(req.rawHeaders) > 1)
      throw new HttpError(400, "The request has more than one Host header; send exactly one.");
    const hostname = hostnameOf(req.headers.host);
    if (hostname === undefined || !this.names.has(hostname)) {
      throw new HttpError(
        421,
        "This server does not answer to that Host; use its own address or a name in CROWS_PUBLIC_HOSTS.",
      );
    }

    const origin = req.headers.origin;
    const method = req.method ?? "GET";
    if (origin !== undefined && !this.isOwnOrigin(origin, req.headers.host!)) {
      if (!this.config.corsOrigins.includes(origin)) {
        throw new HttpError(403, "This origin may not call this server; the owner can list it in CROWS_CORS_ORIGINS.");
      }
      res.setHeader("access-control-allow-origin", origin);
      res.setHeader("access-control-allow-credentials", "true");
      res.setHeader("access-control-expose-headers", CORS_EXPOSE_HEADERS);
      res.setHeader("vary", "Origin");
      if (method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined) {
        // A preflight carries no credentials by design: answer it before the token check.
        res
          .writeHead(204, {
            "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
            "access-control-allow-headers": CORS_ALLOW_HEADERS,
            "access-control-max-age": CORS_MAX_AGE_S,
          })
          .end();
        return "answered";
      }
    }

    const needed = this.scopeOf(method, url.pathname);
    if (needed === "link") {
      // A decide link is the credential for its one decision (compat/decide-pages.ts checks its
      // signature): no token asked, and the principal it gets holds no scope anywhere else.
      principals.set(req, LINK_HOLDER);
      return this.checkBody(req, method, isForm);
    }

    let principal: Principal;
    try {
      if (url.pathname === "/" && url.searchParams.has("token") && (method === "GET" || method === "HEAD")) {
        await this.exchangeToken(url.searchParams.get("token") ?? "", res);
        return "answered";
      }
      principal = await this.principalFor(req);
    } catch (error) {
      // A person in a browser gets a page to read; an API client keeps the JSON 401.
      if (error instanceof HttpError && error.status === 401 && wantsPage(req)) {
        sendTokenPage(req, res, error);
        return "answered";
      }
      throw error;
    }
    principals.set(req, principal);
    if (needed === "post") {
      // A nest post: write, or decide for the owner's reply to an ask (compat/messages.ts checks which).
      if (!principal.scopes.includes("write") && !principal.scopes.includes("decide")) throw lacksScope("write");
    } else if (needed !== "any" && needed !== "graphql" && !principal.scopes.includes(needed)) {
      throw lacksScope(needed);
    }
    if (principal.tokenId !== undefined) this.streams?.track(principal.tokenId, res);

    return this.checkBody(req, method);
  }

  /**
   * A write's body: a 413 over the limit, a 415 when it is not application/json (or, on a decide
   * link, its page's form: the link is the credential, and a foreign Origin was refused above).
   */
  private async checkBody(
    req: http.IncomingMessage,
    method: string,
    alsoAccepts: (contentType: string | undefined) => boolean = () => false,
  ): Promise<"continue"> {
    if (!SAFE_METHODS.has(method) && hasBody(req)) {
      if (declaredTooLarge(req)) {
        await drain(req);
        throw tooLarge();
      }
      if (!isJson(req.headers["content-type"]) && !alsoAccepts(req.headers["content-type"])) {
        const whole = await drain(req);
        throw new HttpError(
          415,
          "Send the body as application/json.",
          {},
          { accept: "application/json", ...(whole ? {} : { connection: "close" }) },
        );
      }
    }
    return "continue";
  }

  /** A same-origin browser request: the Origin names the very host the request was sent to. */
  private isOwnOrigin(origin: string, host: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      return false; // "null" (a sandboxed frame, a file) is nobody's own origin
    }
    return (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.host === host.toLowerCase();
  }

  /** The principal a request's token stands for; a 401 when a token is needed and none matches. */
  private async principalFor(req: http.IncomingMessage): Promise<Principal> {
    const authorization = req.headers.authorization;
    const bearer = authorization && /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
    const presented = bearer || cookie(req.headers.cookie, TOKEN_COOKIE);
    if (this.ownerDigest === undefined) {
      // No token configured: loopback is the owner, as always; a named token still says who it is.
      return (presented && (await this.named(presented))) || ROOT;
    }
    const principal = presented ? await this.match(presented) : undefined;
    if (principal) return principal;
    throw new HttpError(
      401,
      presented
        ? "That token is not valid here."
        : "This server needs a token: send Authorization: Bearer <token>, or open /?token=<token> once in a browser.",
      {},
      { "www-authenticate": 'Bearer realm="crows"' },
    );
  }

  /**
   * Compares against every configured token in constant time (digests of equal length, no early
   * exit), then looks a named token up by its digest (src/access/token-store.ts).
   */
  private async match(presented: string): Promise<Principal | undefined> {
    const given = digest(presented);
    let principal: Principal | undefined;
    if (this.ownerDigest && timingSafeEqual(given, this.ownerDigest)) principal = ROOT;
    for (const reader of this.readerDigests)
      if (timingSafeEqual(given, reader) && principal === undefined) principal = LEGACY_READER;
    return principal ?? (await this.named(presented));
  }

  private async named(presented: string): Promise<Principal | undefined> {
    const found = await this.tokens?.authenticate(presented);
    return found && { actor: found.actor, scopes: found.scopes, tokenId: found.tokenId };
  }

  /** GET /?token=<token>: the cookie for a valid token, then a redirect so the token leaves the address bar. */
  private async exchangeToken(token: string, res: http.ServerResponse): Promise<void> {
    const headers: Record<string, string> = {
      location: "/",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    };
    if (this.ownerDigest !== undefined) {
      if (!token || (await this.match(token)) === undefined) {
        throw new HttpError(401, "That token is not valid here.", {}, { "www-authenticate": 'Bearer realm="crows"' });
      }
      headers["set-cookie"] = `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
    }
    res.writeHead(303, headers).end();
  }
}
