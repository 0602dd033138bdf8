// Two small controls for acts an owner cannot take back or must not lose: a button that asks
// "sure?" in place before it acts (removing a webhook, revoking a token), and a Copy button for a
// secret shown once. In place, not window.confirm: no modal that blocks the page's live streams.
import { useState } from "preact/hooks";
import { attempt } from "./status.ts";

export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" class="reject" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span class="confirm">
      <span>{question}</span>
      <button
        type="button"
        class="reject confirm-yes"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep it
      </button>
    </span>
  );
}

export function CopyButton({ text, what }: { text: string; what: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    const done = await attempt(`Copy the ${what}`, async () => {
      await navigator.clipboard.writeText(text);
      return true;
    });
    if (done) setCopied(true);
  };
  return (
    <button type="button" onClick={() => void copy()}>
      {copied ? "Copied" : "Copy"}
    </button>
  );
}
