// @-addressing (docs/flock.md §6): a post with no `to` whose text opens with `@Name`, naming a
// member of the nest or an addressable service role (Elder, Quill, Boss), is addressed to that
// name, and the stored record's `to` holds the name as the nest spells it. Names are compared like
// requester names (requesterKey: NFKC, case folded, invisible characters dropped, surrounding
// punctuation stripped), so "@hugin", "@HUGIN," and "＠Ｈｕｇｉｎ:" all address Hugin, while a
// lookalike from another script ("@Нugin", Cyrillic Н) is another name. Decided here, and stated in
// docs/nests-chat.md "`to` and `refers_to`":
// - only the first word counts: "@Hugin @Munin ..." is addressed to Hugin (`to` holds one name);
// - a first word that names no member or addressable role ("@everyone", "@Sentry", "@owner", a
//   crow of another nest) addresses nobody: the post stays a room message, with its text as sent;
// - "@ Hugin" (a space after the @) is no address;
// - a `to` that is given wins over the text; the text is never rewritten.
import { requesterKey } from "../flock/rate-limit.ts";
import { ADDRESSABLE_ROLES } from "./post-input.ts";

// Characters that render as nothing, dropped before the first word is read (as requesterKey does).
// biome-ignore lint/suspicious/noMisleadingCharacterClass: each invisible code point is listed alone, on purpose
const LEADING_INVISIBLE = /^[\p{Cf}\p{Cc}\u034F\u180E\u115F\u1160\u3164\uFFA0]+/u;

/** The member or role `text` opens by addressing, as the nest spells it; "" when it addresses none. */
export function addressedIn(text: string, members: readonly string[]): string {
  const opening = text.normalize("NFKC").replace(LEADING_INVISIBLE, "");
  if (!opening.startsWith("@")) return "";
  const word = /^@([^\s@]*)/u.exec(opening)?.[1] ?? "";
  const key = requesterKey(word);
  if (key === "") return "";
  const candidates = [...members, ...ADDRESSABLE_ROLES];
  return candidates.find((name) => name === word) ?? candidates.find((name) => requesterKey(name) === key) ?? "";
}
