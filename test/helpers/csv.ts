// An RFC 4180 reader for the exports' CSV, written apart from the server's writer so a test reads
// the text the way a spreadsheet would: quoted fields may hold commas, doubled quotes and line
// breaks; records end with CRLF (a bare LF is accepted too).

/** Every record of `text`, each a list of its fields; a trailing line break ends the last record. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i += 1;
      } else {
        field += c;
        i += 1;
      }
      continue;
    }
    if (c === '"' && field === "") {
      quoted = true;
      i += 1;
    } else if (c === ",") {
      record.push(field);
      field = "";
      i += 1;
    } else if (c === "\r" || c === "\n") {
      record.push(field);
      records.push(record);
      record = [];
      field = "";
      i += c === "\r" && text[i + 1] === "\n" ? 2 : 1;
    } else {
      field += c;
      i += 1;
    }
  }
  if (quoted) throw new Error("CSV ends inside a quoted field");
  if (field !== "" || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records;
}

/** The records after the header as objects keyed by the header's names; throws on a ragged row. */
export function csvObjects(text: string): { header: string[]; rows: Array<Record<string, string>> } {
  const [header, ...records] = parseCsv(text);
  if (!header) throw new Error("CSV has no header row");
  const rows = records.map((fields, n) => {
    if (fields.length !== header.length)
      throw new Error(`CSV row ${n + 1} has ${fields.length} fields, the header ${header.length}`);
    return Object.fromEntries(header.map((name, k) => [name, fields[k]!]));
  });
  return { header, rows };
}
