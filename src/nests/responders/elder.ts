// A request to the Elder: one deliver to the requester, or one say when its model call fails
// (docs/nests-chat.md "The must-respond loop").
import { taskTypeOf } from "../../models/heuristics.ts";
import type { MessageRecord } from "../message.ts";
import type { NestRecord } from "../store.ts";
import type { ResponderVoice } from "./voice.ts";

export async function elderAnswers(voice: ResponderVoice, nest: NestRecord, request: MessageRecord): Promise<void> {
  const spoken = await voice.speak<{ kind: "deliver" | "say"; text: string }>(
    { role: "crow", input: { task: request.text, taskType: taskTypeOf(request.text) } },
    { speaker: "Elder", persona: "Elder" },
    (text) => ({ kind: "deliver", text }),
    (reason) => ({ kind: "say", text: `The Elder couldn't answer just now (${reason}).` }),
  );
  if (!spoken) return;
  await voice.reply(
    nest,
    { author: "Elder", kind: spoken.kind, to: request.author, refers_to: request.msg_id, text: spoken.text },
    { within: voice.obligations.close(request.msg_id, "Elder", "answered") },
  );
}
