// The document's paths, derived from the route records (compat/route.ts): each record's path
// parameters, query, body and responses, written as JSON Schema by zod itself. A body with a name
// becomes a named component, as the document always had it.
import { z } from "zod";
import type { QueryParam, ResponseSpec, RouteRecord } from "../route.ts";
import { ref, type Operation, type PathItem, type Paths, type Schema } from "./types.ts";

const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * zod's JSON Schema without what the document never said: $schema, a safe integer's own bounds,
 * and closed objects (an answer may gain fields: the API's minor version moves with them).
 */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Schema {
  const { $schema: _, ...out } = z.toJSONSchema(schema, {
    io,
    override: ({ jsonSchema }) => {
      if (jsonSchema.maximum === SAFE) delete jsonSchema.maximum;
      if (jsonSchema.minimum === -SAFE) delete jsonSchema.minimum;
      if (jsonSchema.type !== "object") return;
      if (jsonSchema.additionalProperties === false) delete jsonSchema.additionalProperties;
      // Any object at all (a payload): {"type": "object"}, as the document always wrote it.
      const open = jsonSchema.additionalProperties;
      if (open && typeof open === "object" && Object.keys(open).length === 0) {
        delete jsonSchema.additionalProperties;
        if (jsonSchema.properties && Object.keys(jsonSchema.properties).length === 0) delete jsonSchema.properties;
      }
    },
  }) as Schema;
  return out;
}

const isZod = (schema: unknown): schema is z.ZodType => schema instanceof z.ZodType;

/** A parameter with its description beside its schema, where OpenAPI puts it. */
function parameter(name: string, where: "path" | "query" | "header", schema: z.ZodType, required: boolean) {
  const { description, ...shape } = jsonSchema(schema, "output");
  return { name, in: where, required, ...(description ? { description } : {}), schema: shape };
}

function parameters(record: RouteRecord): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const [name, schema] of Object.entries(record.params?.shape ?? {}))
    out.push(parameter(name, "path", schema as z.ZodType, true));
  const query: Record<string, QueryParam> = { ...record.query, ...record.handlerQuery };
  for (const [name, schema] of Object.entries(query)) out.push(parameter(name, "query", schema, false));
  for (const [name, schema] of Object.entries(record.handlerHeaders ?? {}))
    out.push(parameter(name, "header", schema, false));
  return out;
}

function response(spec: ResponseSpec) {
  if (spec.schema === undefined) return { description: spec.description };
  const schema = isZod(spec.schema) ? jsonSchema(spec.schema, "output") : spec.schema;
  return { description: spec.description, content: { [spec.contentType ?? "application/json"]: { schema } } };
}

function operation(record: RouteRecord, components: Record<string, Schema>): Operation {
  const params = parameters(record);
  const body = record.body ?? record.engineBody;
  let requestBody: Record<string, unknown> | undefined;
  if (body) {
    let schema = jsonSchema(body.schema, "input");
    if (body.name) {
      components[body.name] = schema;
      schema = ref(body.name);
    }
    requestBody = { required: true, content: { "application/json": { schema } } };
  }
  return {
    operationId: record.operationId,
    summary: record.summary,
    ...(record.description ? { description: record.description } : {}),
    tags: record.tags,
    ...(record.security ? { security: [...record.security] } : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: Object.fromEntries(Object.entries(record.responses).map(([status, spec]) => [status, response(spec)])),
  };
}

/** Every record's operation, by path and lowercase method; the named bodies as components. */
export function derivePaths(records: readonly RouteRecord[]): { paths: Paths; components: Record<string, Schema> } {
  const paths: Paths = {};
  const components: Record<string, Schema> = {};
  for (const record of records) {
    const item: PathItem = (paths[record.path] ??= {});
    item[record.method.toLowerCase() as keyof PathItem] = operation(record, components);
  }
  return { paths, components };
}
