// How a posted todo list becomes items (docs/flock.md §4.1): one item per non-empty line, list
// markers stripped, each item 1-2,000 characters after trimming, 1-50 items.
import { BadInputError } from "../base/errors.ts";
import { requesterKey } from "./rate-limit.ts";
import { REQUESTER_REQUIRED } from "./refusals.ts";

export const MAX_ITEM_CHARS = 2000;
export const MAX_ITEMS = 50;

// "-", "*", "+", "•", "1.", "1)", then an optional "[ ]" / "[x]" checkbox.
const MARKER = /^(?:[-*+•](?:\s+|$)|\d{1,3}[.)](?:\s+|$)|[-*+•](?=\[))?(?:\[[ xX]?\](?:\s+|$))?/;

export function parseTodoText(text: string): string[] {
  const items: string[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const item = line.trim().replace(MARKER, "").trim();
    if (item.length === 0) throw new BadInputError(`Line ${index + 1} has a list marker but no item.`);
    if (item.length > MAX_ITEM_CHARS) {
      throw new BadInputError(
        `Line ${index + 1} is ${item.length} characters; an item may have at most ${MAX_ITEM_CHARS}.`,
      );
    }
    items.push(item);
  }
  if (items.length === 0) throw new BadInputError("The todo list is empty: write at least one item.");
  if (items.length > MAX_ITEMS)
    throw new BadInputError(`The todo list has ${items.length} items; at most ${MAX_ITEMS} are allowed.`);
  return items;
}

/** The refusal of a name with nothing left once it is compared (invisible characters, punctuation, spaces). */
export const EMPTY_NAME = (field: string) =>
  `"${field}" has nothing left once invisible characters, surrounding punctuation and spaces are set aside; name someone with a letter or digit.`;

export function parseRequester(requester: string): string {
  if (requester.trim() === "") throw new BadInputError(REQUESTER_REQUIRED);
  const name = requester.trim();
  if (name.length > 100) throw new BadInputError('"requester" may have at most 100 characters.');
  // Names are told apart by requesterKey: one with nothing left would share one key with every other such name.
  if (requesterKey(name) === "") throw new BadInputError(EMPTY_NAME("requester"));
  return name;
}
