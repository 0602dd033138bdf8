// The kind (and a request's mode) of a message, from one classifier call and the headers
// (docs/nests-chat.md "Tagging" holds the band rule and why a fixed kind still asks Jev).
import type { Classifier } from "../classifier/jev.ts";
import {
  CROW_KINDS,
  REQUEST_MODES,
  bandedChoice,
  messageState,
  modeQuestions,
  tagQuestions,
  type CrowKind,
  type RequestMode,
} from "../classifier/questions.ts";
import type { Kind, TaggedBy } from "./message.ts";

export interface Tag {
  kind: Kind;
  taggedBy: TaggedBy;
  mode: string;
  modeTaggedBy: string;
}

export interface TagArgs {
  /** The subject the classifier's answers are stored under until the message has its id. */
  provisional: string;
  text: string;
  author: string;
  to: string;
  refersTo: string;
  forced: Kind | undefined;
  forcedBy: TaggedBy;
  crowHeader: CrowKind | undefined;
  modeHeader: RequestMode | undefined;
}

// docs/contract.md Tagging: one classifier call; Jev's tag stands at or above the band; unsure falls to
// the header; a sure Jev that differs from the header wins as "disagreement"; nothing: say.
// A kind the server fixed stands whatever Jev says (tagged_by "harness"); Jev is asked anyway
// when the kind is one of its choices, so the answer is stored for calibration.
export async function tagMessage(classifier: Classifier, threshold: number, args: TagArgs): Promise<Tag> {
  const { forced, crowHeader, modeHeader } = args;
  // ask_owner, nudge and flag are not among Jev's choices: there is nothing to ask.
  const fixed =
    forced !== undefined && (CROW_KINDS as readonly string[]).includes(forced) ? (forced as CrowKind) : undefined;
  if (forced !== undefined && fixed === undefined)
    return { kind: forced, taggedBy: args.forcedBy, mode: "", modeTaggedBy: "" };
  // A fixed kind other than request has no mode to ask about.
  const questions =
    fixed !== undefined && fixed !== "request" ? tagQuestions() : { ...tagQuestions(), ...modeQuestions() };
  const truth: Record<string, string> = {};
  const kindTruth = fixed ?? crowHeader;
  if (kindTruth) truth.kind = kindTruth;
  if (modeHeader) truth.mode = modeHeader;
  const answers = await classifier.ask({
    state: messageState({ text: args.text, author: args.author, to: args.to, refers_to: args.refersTo }),
    questions,
    subject: args.provisional,
    truth,
  });
  // The loop's own replies keep the kind the loop gave them: Jev's answer is calibration data only.
  const [kind, taggedBy] =
    fixed !== undefined
      ? ([fixed, args.forcedBy] as const)
      : bandRule(bandedChoice(answers.kind, threshold), crowHeader, CROW_KINDS, "say");
  if (kind !== "request") return { kind, taggedBy, mode: "", modeTaggedBy: "" };
  // A request with no usable mode is taken up by one crow.
  const [mode, modeTaggedBy] = bandRule(bandedChoice(answers.mode, threshold), modeHeader, REQUEST_MODES, "solo");
  return { kind, taggedBy, mode, modeTaggedBy };
}

function bandRule<T extends string>(
  banded: ReturnType<typeof bandedChoice>,
  header: T | undefined,
  allowed: readonly T[],
  fallback: T,
): [T, TaggedBy] {
  const jev = banded.sure && (allowed as readonly string[]).includes(banded.choice) ? (banded.choice as T) : undefined;
  if (jev !== undefined) return [jev, header !== undefined && header !== jev ? "disagreement" : "jev"];
  if (header !== undefined) return [header, "header"];
  return [fallback, "default"];
}
