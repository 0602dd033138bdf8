// Feature extraction for the offline model: word unigrams and bigrams per state field, plus a few
// header/shape features (addressing, length, question marks, numbers) and, for the watchdog's
// message-vs-request states, pair features (word overlap, sources cited, numbers or days that
// differ from earlier messages). Binary presence features: the data set is small, counts add noise.

const STOP = new Set(
  "a an the and or but of to in on for with at by from is are was were be been it its this that these those i you we they he she me my our your their us them as so if then than there here do does did have has had will would can could should just also into about over up out".split(
    " ",
  ),
);
const NEGATION = new Set([
  "not",
  "no",
  "never",
  "isn't",
  "isnt",
  "aren't",
  "arent",
  "wasn't",
  "wasnt",
  "won't",
  "wont",
  "don't",
  "dont",
  "doesn't",
  "doesnt",
  "didn't",
  "didnt",
  "cannot",
  "can't",
  "cant",
  "none",
  "nothing",
]);
const DAYS = new Set([
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
  "sunday",
  "today",
  "tomorrow",
  "yesterday",
  "tonight",
]);
const MONTHS = new Set([
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
  "jan",
  "feb",
  "mar",
  "apr",
  "jun",
  "jul",
  "aug",
  "sep",
  "sept",
  "oct",
  "nov",
  "dec",
]);
const SOURCE =
  /(https?:\/\/|www\.|\bsource[sd]?\b|according to|\bper (the|their|its)\b|\bcit(ed|ing|es)\b|\bfrom (the|their|our) [a-z]+ (report|page|docs?|site|website|filing|dashboard|spreadsheet|sheet|release|notes|changelog|invoice|statement|survey|study)\b|\breported by\b|\b(says|said|states) (the|on)\b|\bref(erence)?:|\[\d+\]|\bpage \d+\b|\bsee (the|attached|link)\b)/;
const HEDGE =
  /\b(probably|likely|i think|i believe|guess|estimate[ds]?|roughly|approximately|unverified|not sure|unconfirmed|may be|might be|seems|i'd assume|about \d)/;
const CORRECTION =
  /\b(correction|actually|update[ds]?|revised|revising|earlier i said|i was wrong|my mistake|changed to|moved to|instead of|supersedes|contrary to)\b/;

// Small domain lexicons: cue features whose weights the model still learns from the data. They let
// a word unseen in training ("scraper", "chrome") borrow evidence from its group.
const CUES: Record<string, string[]> = {
  code: "code script bug bugs fix api endpoint test tests sql query regex deploy ci build app frontend backend typescript python javascript react node database schema refactor lint debug implement extension scraper function module modules repo pull github server cron bash css html docker compile crash crashes migrate".split(
    " ",
  ),
  prose:
    "write draft rewrite edit proofread polish email letter note post posts blog copy tagline speech toast bio caption captions description descriptions translate wording paragraph headline slogan story eulogy card message reply".split(
      " ",
    ),
  inquiry:
    "find research compare look check investigate review reviews summarise summarize figure read learn whether why which what how source sources options quotes explore".split(
      " ",
    ),
  chore:
    "book buy order pay renew cancel call return post collect pick register reschedule send ship deliver refund sort renewal fill appointment tickets prescription".split(
      " ",
    ),
  schedule:
    "plan schedule organise organize itinerary budget roadmap timeline rota calendar agenda timetable prepare map steps week month quarter".split(
      " ",
    ),
};
const CUE_OF = new Map<string, string>();
for (const [group, list] of Object.entries(CUES)) for (const w of list) if (!CUE_OF.has(w)) CUE_OF.set(w, group);

export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[^a-z0-9'$%.]+/)
    .map((t) => t.replace(/^[.']+|[.']+$/g, ""))
    .filter((t) => t.length > 0);
}

function words(text: string): string[] {
  return tokenize(text).map((t) => (/^\$?\d[\d.,]*%?$/.test(t) ? "<num>" : t));
}

function contentWords(text: string): Set<string> {
  return new Set(tokenize(text).filter((t) => t.length > 2 && !STOP.has(t) && !/^\d/.test(t)));
}

function numbers(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/\d[\d.,:]*\d|\d/g) ?? []).map((n) => n.replace(/,/g, "")));
}

function timeWords(text: string): Set<string> {
  return new Set(tokenize(text).filter((t) => DAYS.has(t) || MONTHS.has(t)));
}

function lengthBucket(n: number): string {
  if (n <= 4) return "xs";
  if (n <= 10) return "s";
  if (n <= 25) return "m";
  if (n <= 60) return "l";
  return "xl";
}

/** A crude suffix stripper, so "booked"/"booking"/"books" share evidence in a small data set. */
export function stem(word: string): string {
  if (word.length <= 4) return word;
  for (const suffix of ["ing", "ed", "es", "s"]) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, -suffix.length);
  }
  return word;
}

function textFeatures(prefix: string, text: string, out: Set<string>): void {
  const w = words(text);
  for (const t of w) {
    out.add(`${prefix}w:${t}`);
    out.add(`${prefix}s:${stem(t)}`);
    const cue = CUE_OF.get(t) ?? CUE_OF.get(stem(t));
    if (cue) out.add(`${prefix}cue:${cue}`);
  }
  const firstCue = w[0] === undefined ? undefined : (CUE_OF.get(w[0]) ?? CUE_OF.get(stem(w[0])));
  if (firstCue) out.add(`${prefix}firstcue:${firstCue}`);
  for (let i = 0; i + 1 < w.length; i++) out.add(`${prefix}b:${w[i]}_${w[i + 1]}`);
  if (w.length > 0) out.add(`${prefix}first:${w[0]}`);
  if (w.length > 1) out.add(`${prefix}first2:${w[0]}_${w[1]}`);
  out.add(`${prefix}len:${lengthBucket(w.length)}`);
  if (/\?\s*$/.test(text.trim())) out.add(`${prefix}ends:?`);
  else if (text.includes("?")) out.add(`${prefix}has:?`);
  if (/https?:\/\/|www\./.test(text)) out.add(`${prefix}has:url`);
  if (/\b[\w-]+\.(md|pdf|docx?|xlsx?|csv|ts|js|py|json|png|svg|txt|key|pptx?)\b/i.test(text))
    out.add(`${prefix}has:file`);
  if (/\d/.test(text)) out.add(`${prefix}has:digit`);
  if (/(^|\n)\s*([-*•]|\d+[.)])\s/.test(text) || (text.match(/,/g) ?? []).length >= 3) out.add(`${prefix}has:list`);
  if (/@\w/.test(text)) out.add(`${prefix}has:@`);
  if (/```|\bfunction\b|=>|\bconst\b|\bSELECT\b/.test(text)) out.add(`${prefix}has:code`);
}

function field(state: Record<string, unknown>, key: string): string {
  const v = state[key];
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.filter((x) => typeof x === "string").join("\n");
  return "";
}

/** The features of a state. String states are read as the text of a message or item. */
export function extractFeatures(state: string | Record<string, unknown>): string[] {
  const s: Record<string, unknown> = typeof state === "string" ? { text: state } : state;
  const out = new Set<string>();
  out.add("bias:1");
  if ("message" in s || "request" in s) {
    // Watchdog state: a claim/deliver against its request and the earlier messages.
    const message = field(s, "message");
    const request = field(s, "request");
    const earlier = field(s, "earlier");
    const context = `${request}\n${earlier}`;
    textFeatures("m", message, out);
    for (const t of contentWords(request)) out.add(`rw:${t}`);
    const kind = field(s, "kind");
    if (kind) out.add(`kind:${kind}`);

    const mw = contentWords(message);
    const rw = contentWords(request);
    let shared = 0;
    for (const t of rw) if (mw.has(t)) shared++;
    const overlap = rw.size ? shared / rw.size : 0;
    out.add(`p:overlap:${overlap === 0 ? "0" : overlap < 0.2 ? "lo" : overlap < 0.45 ? "mid" : "hi"}`);
    const lower = message.toLowerCase();
    out.add(SOURCE.test(lower) ? "p:source" : "p:nosource");
    if (HEDGE.test(lower)) out.add("p:hedge");
    const mNums = numbers(message);
    out.add(`p:nums:${mNums.size === 0 ? "0" : mNums.size <= 2 ? "few" : "many"}`);
    if (/\b(19|20)\d\d\b/.test(message)) out.add("p:year");
    if (/%|\$|€|£/.test(message)) out.add("p:figure");
    if (/\b[A-Z][a-z]+ [A-Z][a-z]+\b/.test(message.replace(/^\s*\w+/, ""))) out.add("p:propername");

    const cNums = numbers(context);
    if (mNums.size && cNums.size) {
      let fresh = 0;
      for (const n of mNums) if (!cNums.has(n)) fresh++;
      out.add(fresh === 0 ? "p:num:same" : fresh === mNums.size ? "p:num:alldiff" : "p:num:somediff");
    }
    const mTime = timeWords(message);
    const cTime = timeWords(context);
    if (mTime.size && cTime.size) {
      let fresh = 0;
      for (const t of mTime) if (!cTime.has(t)) fresh++;
      out.add(fresh ? "p:time:diff" : "p:time:same");
    }
    const mNeg = tokenize(message).some((t) => NEGATION.has(t));
    const cNeg = tokenize(context).some((t) => NEGATION.has(t));
    if (mNeg !== cNeg) out.add("p:negflip");
    if (CORRECTION.test(lower)) out.add("p:correction");
    if (earlier.trim()) {
      const ew = contentWords(earlier);
      let sharedE = 0;
      for (const t of mw) if (ew.has(t)) sharedE++;
      out.add(`p:earlier:${sharedE === 0 ? "0" : sharedE < 3 ? "lo" : "hi"}`);
    } else {
      out.add("p:earlier:none");
    }
    return [...out];
  }
  if ("item" in s) {
    textFeatures("t", field(s, "item"), out);
    return [...out];
  }
  // A nest message with its header fields.
  textFeatures("t", field(s, "text"), out);
  const author = field(s, "author");
  if (author) out.add(author.toLowerCase() === "owner" ? "h:author:owner" : "h:author:crow");
  out.add(field(s, "to") ? "h:to" : "h:to:room");
  out.add(field(s, "refers_to") ? "h:ref" : "h:ref:none");
  return [...out];
}
