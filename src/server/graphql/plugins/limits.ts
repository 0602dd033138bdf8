// GraphQL limits from graphql-armor: tokens (checked while parsing, so a 10,000-deep or 100,000-alias
// document stops after the first few hundred tokens), then directives, aliases and depth (checked
// at validation, before anything runs). The cost, which multiplies by list sizes and so needs the
// variables, is checked just before execution (bounds.ts, cost.ts). A refusal is a 400 whose error carries a code and the limit.
// The values fit every documented query and GraphiQL's introspection (test/security-graphql.test.ts
// runs them); docs/security.md lists them with the reasons.
import { GraphQLError, type ValidationContext } from "graphql";
import type { Plugin } from "graphql-yoga";
import { EnvelopArmor } from "@escape.tech/graphql-armor";
import { BOUND_CODES } from "./bounds.ts";

export const GRAPHQL_LIMITS = {
  /** Lexical tokens in one document. */
  maxTokens: 2000,
  /** Nested selections (introspection's own nesting is not counted). */
  maxDepth: 5,
  /** Aliased fields (__typename aliases are counted too). */
  maxAliases: 15,
  /** Directives in one document. */
  maxDirectives: 10,
} as const;

type LimitCode = "TOO_MANY_TOKENS" | "QUERY_TOO_DEEP" | "TOO_MANY_ALIASES" | "TOO_MANY_DIRECTIVES";
const LIMIT_CODES = new Set<string>([
  ...(["TOO_MANY_TOKENS", "QUERY_TOO_DEEP", "TOO_MANY_ALIASES", "TOO_MANY_DIRECTIVES"] satisfies LimitCode[]),
  ...BOUND_CODES,
]);

function coded(error: GraphQLError, code: LimitCode, limit: number): GraphQLError {
  // spec: false keeps Yoga from answering 200 over application/json (its rule for ordinary
  // validation errors): a refused document is the client's error, a 400 whatever it accepts.
  return new GraphQLError(error.message.replace(/^Syntax Error: /, ""), {
    extensions: { code, limit, http: { status: 400, spec: false } },
  });
}

/** Armor's validation rules report a coded error instead of throwing their plain one. */
function report(code: LimitCode, limit: number) {
  return {
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) => context?.reportError(coded(error, code, limit)),
    ],
  };
}

export function graphqlLimits(): Plugin[] {
  const L = GRAPHQL_LIMITS;
  const armor = new EnvelopArmor({
    maxTokens: {
      n: L.maxTokens,
      propagateOnRejection: false,
      // The parser has no validation context to report to: throwing stops it at the first token over.
      onReject: [
        (_context, error) => {
          throw coded(error, "TOO_MANY_TOKENS", L.maxTokens);
        },
      ],
    },
    maxDirectives: { n: L.maxDirectives, ...report("TOO_MANY_DIRECTIVES", L.maxDirectives) },
    maxAliases: { n: L.maxAliases, allowList: [], ...report("TOO_MANY_ALIASES", L.maxAliases) },
    costLimit: { enabled: false }, // armor's cost does not multiply by list sizes: cost.ts does
    maxDepth: { n: L.maxDepth, flattenFragments: true, ...report("QUERY_TOO_DEEP", L.maxDepth) },
    // Introspection is open (GraphiQL), so "did you mean" suggestions reveal nothing; they help.
    blockFieldSuggestion: { enabled: false },
  });
  // Yoga marks every parse error as a spec error (`spec ||= true`, in a plugin that runs after ours),
  // which would make the token refusal a 200 over application/json; just before the answer is
  // written, a limit refusal is made a plain 400 again.
  const limitRefusalStays400: Plugin = {
    onResultProcess({ result }) {
      for (const single of Array.isArray(result) ? result : [result]) {
        for (const error of (single as { errors?: readonly GraphQLError[] }).errors ?? []) {
          const http = error.extensions?.http as { spec?: boolean } | undefined;
          if (http && LIMIT_CODES.has(String(error.extensions.code))) http.spec = false;
        }
      }
    },
  };
  return [...(armor.protect().plugins as Plugin[]), limitRefusalStays400];
}
