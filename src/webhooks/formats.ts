// The shape of a delivery's body (docs/webhooks.md "Formats"): Standard Webhooks JSON by default,
// or what a chat or push service's incoming webhook reads, so an owner who pastes a Slack, Discord
// or ntfy URL gets a readable message naming the item and what waits, with the decide links. The
// signing headers (webhook-id, -timestamp, -signature) go with every format, over the exact body.
//   standard  {type, timestamp, data}, application/json
//   slack     {text, blocks}: a section in mrkdwn and, when there are decide links, link buttons
//   discord   {content, embeds}: the text with the links in markdown, and one embed
//   ntfy      the text as a plain body; Title, Click (the approve page) and Actions (view buttons)
//             as headers, ASCII only (a header is no place for the item's own characters)

export const WEBHOOK_FORMATS = ["standard", "slack", "discord", "ntfy"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export const isWebhookFormat = (value: unknown): value is WebhookFormat =>
  typeof value === "string" && (WEBHOOK_FORMATS as readonly string[]).includes(value);

export interface FormattedBody {
  body: string;
  contentType: string;
  /** Headers the format adds (ntfy's); never the signing ones. */
  headers: Record<string, string>;
}

/** The longest item text quoted in a message: chat services cap a message (Discord: 2,000). */
const QUOTE_CHARS = 300;

const quote = (text: unknown) => {
  const s = String(text ?? "")
    .replace(/\s+/g, " ")
    .trim();
  return s.length > QUOTE_CHARS ? `${s.slice(0, QUOTE_CHARS - 1)}…` : s;
};

const targetWord = (target: unknown) => (target === "output" ? "answer" : "triage");

/** What the minutes left read as, from a deadline to `now`. */
function minutesLeft(deadline: unknown, nowMs: number): string {
  const ms = Date.parse(String(deadline ?? ""));
  if (Number.isNaN(ms)) return "";
  const minutes = Math.max(0, Math.ceil((ms - nowMs) / 60_000));
  return `${minutes} min left`;
}

/** A delivery as words: a title, a line naming the item and what waits, and its decide links. */
export interface Notice {
  title: string;
  text: string;
  links: Array<{ label: string; url: string }>;
}

export function noticeOf(type: string, data: Record<string, unknown>, nowMs: number): Notice {
  const item = quote(data.text) || String(data.item ?? data.item_id ?? "");
  const links: Notice["links"] = [];
  if (typeof data.approve_url === "string") links.push({ label: "Approve", url: data.approve_url });
  if (typeof data.reject_url === "string") links.push({ label: "Reject", url: data.reject_url });
  const left = minutesLeft(data.deadline, nowMs);
  switch (type) {
    case "approval.requested":
      return {
        title: `crows: a ${targetWord(data.target)} waits for you`,
        text: `The ${targetWord(data.target)} of "${item}" waits for your verdict${left ? ` (${left}; silence then counts as no)` : ""}.`,
        links,
      };
    case "approval.reminder":
      return {
        title: `crows: ${left || "little time"} to decide`,
        text: `${left || "Little time"} to decide the ${targetWord(data.target)} of "${item}"; silence then counts as no.`,
        links,
      };
    case "approval.decided":
      return {
        title: "crows: a verdict",
        text: `The ${targetWord(data.target)} of ${String(data.item_id ?? "")}: ${String(data.verdict ?? "")}${data.reason ? ` ("${quote(data.reason)}")` : ""}.`,
        links,
      };
    case "ask.opened":
      return {
        title: `crows: ${String(data.author ?? "a crow")} asks you`,
        text: `${String(data.author ?? "A crow")} asks you in ${String(data.nest_id ?? "a nest")}: "${quote(data.text)}". Reply "${String(data.approval_phrase ?? "")}" to approve${left ? ` (${left})` : ""}.`,
        links: links.slice(0, 1),
      };
    case "tool_call.requested":
      return {
        title: "crows: a tool call waits for you",
        text: `${String(data.crow ?? "A crow")} wants to call ${String(data.server ?? "")}/${String(data.tool ?? "")} (${quote(data.args)})${left ? `, ${left}` : ""}.`,
        links,
      };
    case "list.finished":
      return { title: "crows: a list finished", text: `List ${String(data.list_id ?? "")} finished.`, links };
    default:
      return {
        title: `crows: ${type}`,
        text: `${type}${data.item_id ? ` on ${String(data.item_id)}` : data.list_id ? ` on ${String(data.list_id)}` : ""}.`,
        links,
      };
  }
}

/** Keeps a header to printable ASCII (Node refuses others, and ntfy reads ASCII plainly). */
const ascii = (text: string) => text.replace(/[^\x20-\x7e]/g, "?");

/** The body of one delivery in the endpoint's format. */
export function formatBody(
  format: WebhookFormat,
  delivery: { type: string; timestamp: string; data: Record<string, unknown> },
  nowMs: number,
): FormattedBody {
  if (format === "standard") return { body: JSON.stringify(delivery), contentType: "application/json", headers: {} };
  const notice = noticeOf(delivery.type, delivery.data, nowMs);
  switch (format) {
    case "slack": {
      const blocks: unknown[] = [
        { type: "section", text: { type: "mrkdwn", text: `*${notice.title}*\n${notice.text}` } },
      ];
      if (notice.links.length > 0)
        blocks.push({
          type: "actions",
          elements: notice.links.map((l) => ({
            type: "button",
            text: { type: "plain_text", text: l.label },
            url: l.url,
            ...(l.label === "Approve" ? { style: "primary" } : l.label === "Reject" ? { style: "danger" } : {}),
          })),
        });
      const text = [notice.text, ...notice.links.map((l) => `${l.label}: <${l.url}>`)].join("\n");
      return { body: JSON.stringify({ text, blocks }), contentType: "application/json", headers: {} };
    }
    case "discord": {
      const linkLine = notice.links.map((l) => `[${l.label}](${l.url})`).join(" · ");
      const content = [notice.text, linkLine].filter(Boolean).join("\n");
      const embed: Record<string, unknown> = { title: notice.title, description: notice.text };
      if (notice.links[0]) embed.url = notice.links[0].url;
      return {
        body: JSON.stringify({ content, embeds: [embed], allowed_mentions: { parse: [] } }),
        contentType: "application/json",
        headers: {},
      };
    }
    case "ntfy": {
      const headers: Record<string, string> = { Title: ascii(notice.title), Tags: "crow" };
      if (notice.links[0]) headers.Click = notice.links[0].url;
      if (notice.links.length > 0)
        headers.Actions = notice.links.map((l) => `view, ${l.label}, ${l.url}, clear=true`).join("; ");
      return { body: notice.text, contentType: "text/plain; charset=utf-8", headers };
    }
  }
}
