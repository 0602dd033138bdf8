// The server's few HTML pages (the token page, src/server/access.ts; the decide links' pages,
// compat/decide-pages.ts): one shell, one escape, one set of headers. Self-contained: no
// script, nothing loaded, nothing sent echoed unescaped; the CSP allows only the inline style,
// data: images (the empty icon) and a form posting back to this server.
import type http from "node:http";

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const BASE_STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1d1d1f}";

const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export interface HtmlPage {
  /** The document's title, plain text (escaped here). */
  title: string;
  /** What goes inside <main>, escaped by the caller where it quotes anything. */
  main: string;
  /** Style rules beside the shared body rule. */
  style: string;
  /** Kept out of search engines (a decide link). */
  noindex?: boolean;
}

export function htmlPageText(page: HtmlPage): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${page.noindex ? '<meta name="robots" content="noindex">\n' : ""}<title>${escapeHtml(page.title)}</title>
<link rel="icon" href="data:,">
<style>${BASE_STYLE}${page.style}</style>
</head>
<body>
<main>
${page.main}
</main>
</body>
</html>
`;
}

/** The page's own headers for this text: type, length, the CSP, never cached. */
export function htmlPageHeaders(html: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "content-length": String(Buffer.byteLength(html)),
    "content-security-policy": PAGE_CSP,
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
  };
}

/** Sends the page (no body for HEAD), never cached; `headers` add to or override the page's own. */
export function sendHtmlPage(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  status: number,
  page: HtmlPage,
  headers: Record<string, string>,
): void {
  const html = htmlPageText(page);
  res.writeHead(status, { ...htmlPageHeaders(html), ...headers });
  res.end(req.method === "HEAD" ? undefined : html);
}
