// The nest every list and message belongs to when none is named: `todo`, whose crew is the whole
// flock. A module of its own so the crew (src/flock/crew.ts) and the nest store
// (src/nests/store.ts) both read it without importing each other.
export const DEFAULT_NEST = "todo";
