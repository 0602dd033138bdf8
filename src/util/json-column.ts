// Some columns hold a JSON array of strings in a text field (SQLite has no array type). Reading
// one never throws: a damaged value reads as an empty list rather than breaking a stream.
export function stringArray(text: string | null | undefined): string[] {
  if (!text) return [];
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}
