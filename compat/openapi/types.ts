// The small slice of OpenAPI 3.1's shapes the description is written in: enough for the typecheck
// to catch a misspelt key, not a model of the whole specification.

export type Schema = Record<string, unknown>;

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** [] where no token is asked (a decide link is its own credential; a delivery is signed). */
  security?: Array<Record<string, string[]>>;
  parameters?: Array<Record<string, unknown>>;
  requestBody?: Record<string, unknown>;
  responses: Record<string, Record<string, unknown>>;
}

/** A path's operations by lowercase method, as OpenAPI writes them. */
export type PathItem = Partial<Record<"get" | "post" | "delete", Operation>>;

/** One family's paths (one file each, so a branch adding a family adds one file and one import). */
export type Paths = Record<string, PathItem>;

/** A JSON response of a component schema. */
export const json = (description: string, schema: Schema) => ({
  description,
  content: { "application/json": { schema } },
});

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** The {"message"} refusal every 4xx carries. */
export const refusal = (description: string) => json(description, ref("Refusal"));

export const body = (schema: Schema) => ({ required: true, content: { "application/json": { schema } } });

export const query = (name: string, description: string, schema: Schema, required = false) => ({
  name,
  in: "query",
  required,
  description,
  schema,
});
