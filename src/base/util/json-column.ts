// Some columns hold a JSON array in a text field (SQLite has no array type). Reading one never
// throws: a damaged value reads as an empty list rather than breaking a stream or a request.
export function jsonArray<T>(text: string | null | undefined, isItem: (value: unknown) => value is T): T[] {
  if (!text) return [];
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter(isItem) : [];
  } catch {
    return [];
  }
}

export const stringArray = (text: string | null | undefined): string[] =>
  jsonArray(text, (v): v is string => typeof v === "string");
export const numberArray = (text: string | null | undefined): number[] =>
  jsonArray(text, (v): v is number => typeof v === "number");
