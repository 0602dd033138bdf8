// The schema as a contract: the changes from a base schema (main's committed SDL) that would break a
// client, found by graphql's own findBreakingChanges, each either named in CHANGELOG.md or refused.
// A break is named when a backticked span of the changelog starts with its coordinate (`Type.field`,
// `Type.field(arg:)`, or `Type` for a whole type), so a deliberate break ships with its line.
import { buildSchema, findBreakingChanges, type BreakingChange } from "graphql";

export interface SchemaBreak {
  /** graphql's kind, e.g. FIELD_REMOVED, FIELD_CHANGED_KIND, ARG_CHANGED_KIND. */
  type: string;
  description: string;
  /** `Type.field` or `Type`: what the changelog must name. */
  coordinate: string;
  named: boolean;
}

/**
 * The coordinate graphql's description names: "Item.mode changed type...", "Query.lists was
 * removed.", "A required arg requester on Query.lists was added.", "B was removed from enum type E."
 */
export function coordinateOf(change: BreakingChange): string {
  const d = change.description;
  const fromEnum = /^(\w+) was removed from enum type (\w+)/.exec(d);
  if (fromEnum) return `${fromEnum[2]}.${fromEnum[1]}`;
  const fromUnion = /^\w+ was removed from union type (\w+)/.exec(d);
  if (fromUnion) return fromUnion[1]!;
  const requiredArg = /^A required arg \w+ on ([\w.]+) was added/.exec(d);
  if (requiredArg) return requiredArg[1]!;
  const requiredField = /^A required field (\w+) on input type (\w+) was added/.exec(d);
  if (requiredField) return `${requiredField[2]}.${requiredField[1]}`;
  return /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?/.exec(d)?.[0] ?? d;
}

/** Every backticked span of the changelog. */
function backticked(changelog: string): string[] {
  return [...changelog.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim());
}

export function isNamed(coordinate: string, changelog: string): boolean {
  return backticked(changelog).some(
    (span) => span === coordinate || (span.startsWith(coordinate) && !/[\w.]/.test(span[coordinate.length]!)),
  );
}

/** The breaking changes from `baseSdl` to `nextSdl`, each marked named or not by `changelog`. */
export function schemaBreaks(baseSdl: string, nextSdl: string, changelog: string): SchemaBreak[] {
  return findBreakingChanges(buildSchema(baseSdl), buildSchema(nextSdl)).map((change) => {
    const coordinate = coordinateOf(change);
    return { type: change.type, description: change.description, coordinate, named: isNamed(coordinate, changelog) };
  });
}
