// The words of the flock's input refusals, written once: the REST routes check a body's types with
// them (compat/lists.ts, compat/verdicts.ts), and the engine refuses a blank value with them, so a
// client reads the same sentence whichever check caught it.
export const TEXT_NOT_STRING = '"text" must be a string holding the todo list, one item per line.';
export const REQUESTER_REQUIRED = '"requester" must be a non-empty string naming who asks.';
export const NEST_ID_BLANK = '"nest_id" must be a non-empty string when given.';
export const ITEM_ID_REQUIRED = '"item_id" must be a non-empty string.';
export const TARGET_INVALID = '"target" must be "triage" or "output".';
export const APPROVE_REQUIRED =
  '"approve" is required and must be true or false; a missing answer is never read as a no.';
// The owner's word with a verdict (docs/rules.md "Reasons", "Rework", "Edits"): its types are
// checked by the route's record; the engine checks the rest (a reason's length, rework with a yes,
// an edit's fields).
export const REASON_NOT_TEXT = '"reason" must be text (or left out).';
export const REWORK_NOT_BOOLEAN = '"rework" must be true or false (or left out).';
export const REWORK_WITH_APPROVAL = '"rework" goes with a rejection ("approve": false) only.';
export const EDIT_NOT_OBJECT = '"edit" must be an object.';
