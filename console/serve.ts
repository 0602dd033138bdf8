// Serves the owner console from the server's own origin: GET / is the page, /console/* its bundle
// and the calibration diagram. The bundle is built on first use when missing or stale (build.ts).
// A strict Content-Security-Policy keeps every request on this origin (no CDN, works offline).
import type http from "node:http";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BUNDLE_FILES, CONSOLE_DIST_DIR, buildConsole, bundleIsFresh } from "./build.ts";
import { HttpError } from "../src/http/http-error.ts";
import { describeError } from "../src/base/describe-error.ts";

const DOCS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "docs");

/** The paths this handler answers; the HTTP dispatcher routes them here. */
export function isConsolePath(pathname: string): boolean {
  return pathname === "/" || pathname === "/index.html" || pathname.startsWith("/console/");
}

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>crows console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/app.css">
<script type="module" src="/console/app.js"></script>
</head>
<body>
<div id="console"><noscript>The crows console needs JavaScript. The API is at /graphql and /api.</noscript></div>
</body>
</html>
`;

interface Asset {
  type: string;
  body: Buffer;
}

let bundle: Promise<Map<string, Asset>> | undefined;

/** The built bundle, read once per process (built first when missing or older than its sources). */
function loadBundle(): Promise<Map<string, Asset>> {
  bundle ??= (async () => {
    if (!bundleIsFresh()) await buildConsole();
    const assets = new Map<string, Asset>();
    for (const file of BUNDLE_FILES) {
      const type = file.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
      assets.set(`/console/${file}`, { type, body: readFileSync(path.join(CONSOLE_DIST_DIR, file)) });
    }
    assets.set("/console/jev-reliability.svg", {
      type: "image/svg+xml",
      body: readFileSync(path.join(DOCS_DIR, "jev-reliability.svg")),
    });
    return assets;
  })();
  bundle.catch(() => (bundle = undefined)); // a failed build is retried on the next request
  return bundle;
}

function send(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
): void {
  const headers = { ...SECURITY_HEADERS, "content-type": type, "content-length": String(Buffer.byteLength(body)) };
  res.writeHead(status, headers).end(req.method === "HEAD" ? undefined : body);
}

/**
 * The page, or one of its files. Refusals are HttpErrors for the server's one error handler; a
 * build that fails is logged (by class and place, never esbuild's text with its paths) and read
 * as a 503 the owner can retry.
 */
export async function serveConsole(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  logLine: (line: string) => void,
): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD")
    throw new HttpError(405, "The console is read with GET.", {}, { allow: "GET, HEAD" });
  if (url.pathname === "/" || url.pathname === "/index.html") {
    send(req, res, 200, "text/html; charset=utf-8", PAGE);
    return;
  }
  let assets: Map<string, Asset>;
  try {
    assets = await loadBundle();
  } catch (error) {
    logLine(`console: the bundle could not be built: ${describeError(error)}`);
    throw new HttpError(
      503,
      "The console could not be built; the server log says why. Try again.",
      {},
      { "retry-after": "5" },
    );
  }
  const asset = assets.get(url.pathname);
  if (!asset) throw new HttpError(404, `No console file ${url.pathname}.`);
  send(req, res, 200, asset.type, asset.body);
}
