// A request to Quill: one deliver to the requester, or a relay to the member it names, or one say
// back when it cannot name one (docs/nests-chat.md "Quill").
import { parseQuill } from "../../models/formats.ts";
import type { MessageRecord } from "../message.ts";
import type { NestRecord } from "../store.ts";
import type { ResponderVoice } from "./voice.ts";

export async function quillAnswers(voice: ResponderVoice, nest: NestRecord, request: MessageRecord): Promise<void> {
  const members = await voice.chat.members(nest);
  const reply = await voice.speak(
    { role: "quill", input: { requester: request.author, text: request.text, members } },
    { speaker: "Quill", persona: "Quill" },
    parseQuill,
    (reason) => ({ kind: "invalid" as const, error: reason }),
  );
  if (!reply) return;
  const back = { author: "Quill", to: request.author, refers_to: request.msg_id };
  const answering = { within: voice.obligations.close(request.msg_id, "Quill", "answered") };
  switch (reply.kind) {
    case "relay":
      if (members.includes(reply.to)) {
        // The relay rides the record shape: a request by Quill to the crow; it calls for that crow.
        await voice.reply(
          nest,
          { author: "Quill", kind: "request", text: reply.text, to: reply.to, refers_to: request.msg_id },
          { ...answering, callsForResponse: true },
        );
        return;
      }
      await voice.reply(
        nest,
        { ...back, kind: "say", text: `I can't pass this to ${reply.to}: ${reply.to} is not a member of this nest.` },
        answering,
      );
      return;
    case "say":
      await voice.reply(nest, { ...back, kind: "say", text: reply.text }, answering);
      return;
    case "answer":
      await voice.reply(nest, { ...back, kind: "deliver", text: reply.text }, answering);
      return;
    case "invalid":
      await voice.reply(
        nest,
        { ...back, kind: "say", text: `I couldn't answer that just now (${reply.error}).` },
        answering,
      );
      return;
  }
}
