// One timer per interval, shared by everyone beating on it: a thousand idle streams on the same
// heartbeat cost one setInterval, not a thousand. The timer exists only while someone has joined,
// and never keeps the process alive.

const intervals = new Map<number, { members: Set<() => void>; timer: NodeJS.Timeout }>();

/** Calls `beat` every `ms` on the interval's shared timer; the returned function leaves it. */
export function joinSharedInterval(ms: number, beat: () => void): () => void {
  let interval = intervals.get(ms);
  if (!interval) {
    const members = new Set<() => void>();
    const timer = setInterval(() => {
      for (const member of members) member();
    }, ms);
    timer.unref();
    intervals.set(ms, (interval = { members, timer }));
  }
  const joined = interval;
  const member = () => beat(); // its own identity: one function joined twice is two members
  joined.members.add(member);
  return () => {
    joined.members.delete(member);
    if (joined.members.size === 0 && intervals.get(ms) === joined) {
      clearInterval(joined.timer);
      intervals.delete(ms);
    }
  };
}
