// Console notifications: after the owner presses "Notify me" and the browser grants it, each new
// approval or nest ask raises a Notification while the tab is in the background, and clicking one
// brings the tab forward and focuses that approval. The tab's title counts what waits: "(3) crows".
// The Approvals region reports approvals (noteApprovals); open asks are read every ASK_POLL_MS,
// since asks have no cross-nest feed.
import { gql } from "./api.ts";

const ASK_POLL_MS = 10_000;
const NEST_IDS = `query NestIds { nests { id } }`;
const OPEN_ASKS = `query OpenAsks($nestId: ID!) { asks(nestId: $nestId, resolved: "") { approvalPhrase message { msgId author text } } }`;

type Ask = { approvalPhrase: string; message: { msgId: string; author: string; text: string } };
const BASE_TITLE = "crows";

type Waiting = {
  key: string;
  title: string;
  body: string /** Where clicking it takes the owner. */;
  focus: () => void;
};

let approvals: Waiting[] = [];
let asks: Waiting[] = [];
let seenApprovals: Set<string> | undefined;
let seenAsks: Set<string> | undefined;
const listeners = new Set<() => void>();

export const notificationsSupported = (): boolean => typeof Notification !== "undefined";
export const permission = (): NotificationPermission | "unsupported" =>
  notificationsSupported() ? Notification.permission : "unsupported";

export function onPermissionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The "Notify me" button: asks the browser once; the answer sticks in the browser. */
export async function askPermission(): Promise<void> {
  if (!notificationsSupported()) return;
  await Notification.requestPermission();
  listeners.forEach((l) => {
    l();
  });
}

function raise(waiting: Waiting): void {
  if (permission() !== "granted" || !document.hidden) return;
  const note = new Notification(waiting.title, { body: waiting.body, tag: waiting.key });
  note.onclick = () => {
    window.focus();
    waiting.focus();
    note.close();
  };
}

function retitle(): void {
  const count = approvals.length + asks.length;
  document.title = count > 0 ? `(${count}) ${BASE_TITLE}` : BASE_TITLE;
}

/** Raises one notification per waiting thing not seen before (none for what waited at load). */
function update(now: Waiting[], seen: Set<string> | undefined): Set<string> {
  const keys = new Set(now.map((w) => w.key));
  if (seen) for (const w of now) if (!seen.has(w.key)) raise(w);
  return keys;
}

/** What the Approvals region shows now; called on every change. */
export function noteApprovals(now: Waiting[]): void {
  approvals = now;
  seenApprovals = update(now, seenApprovals);
  retitle();
}

async function pollAsks(): Promise<void> {
  try {
    const { nests } = await gql<{ nests: Array<{ id: string }> }>(NEST_IDS);
    const open = await Promise.all(
      nests.map(async (n) => ({ id: n.id, asks: (await gql<{ asks: Ask[] }>(OPEN_ASKS, { nestId: n.id })).asks })),
    );
    const now: Waiting[] = open.flatMap((n) =>
      n.asks.map((a) => ({
        key: `ask:${a.message.msgId}`,
        title: `${a.message.author} asks you (${n.id})`,
        body: `${a.message.text}\nReply "${a.approvalPhrase}" to approve.`,
        focus: () => {
          location.hash = "nests";
        },
      })),
    );
    asks = now;
    seenAsks = update(now, seenAsks);
    retitle();
  } catch {
    // The console shows connection trouble elsewhere; the next poll tries again.
  }
}

export function startAskPolling(): () => void {
  void pollAsks();
  const timer = setInterval(() => void pollAsks(), ASK_POLL_MS);
  return () => clearInterval(timer);
}
