// The Sentry's triage calls (docs/flock.md §4): one crow (solo), one crow per subtask (split), or
// several crows each attempting it, the Elder merging (murder). The models' parsers, the offline
// brain, the classifier's question, the flock's events and the schema all take the set from here.
// No imports: every floor may use it.
export const TRIAGE_MODES = ["solo", "split", "murder"] as const;
export type TriageMode = (typeof TRIAGE_MODES)[number];
