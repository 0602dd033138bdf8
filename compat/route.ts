// One record per REST route (docs/architecture.md "Adding a REST route"): its method and path,
// the scope it needs, zod schemas for its path parameters, query and body, and each response it
// gives, errors included. From the record come the router (compat/router.ts), the access check
// (src/server/route-scopes.ts asks the matched record), the validation (the handler gets parsed,
// typed input) and the OpenAPI document's paths (compat/openapi/derive.ts). Modelled on Hono's
// createRoute and Fastify's route schemas, in the shape this server already had.
import { z } from "zod";
import { BadInputError } from "../src/base/errors.ts";
import type { App } from "../src/app.ts";
import type { Scope } from "../src/access/scopes.ts";
import { HttpError } from "../src/http/http-error.ts";
import type { Schema } from "./openapi/types.ts";
import type { CompatRequest, CompatResponse, Route } from "./router.ts";

/**
 * A scope; "post": write, or decide for the owner's reply to an ask (the route checks which once
 * it has the body); "link": no token, the path is its own credential (a decide link).
 */
export type RouteScope = Scope | "post" | "link";

/** A query parameter: a schema over every value the query gave for its name (compat/query-params.ts). */
export type QueryParam = z.ZodType<unknown, string[]>;

/** One response: its description and, when it has a body, the body's schema and content type. */
export interface ResponseSpec {
  description: string;
  /** A zod schema, or JSON Schema (a $ref to a named component, a shape zod cannot say). */
  schema?: z.ZodType | Schema;
  /** application/json unless said. */
  contentType?: string;
}

/** The request body: a zod schema; `name` keeps it a named component of the document. */
export interface BodySpec<B> {
  schema: z.ZodType<B>;
  name?: string;
}

export interface RouteDocs {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
}

type Parsed<T> = T extends z.ZodType ? z.output<T> : undefined;
type QueryOf<Q> = { [K in keyof Q]: Q[K] extends z.ZodType ? z.output<Q[K]> : never };

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

export interface RouteSpec<P extends z.ZodObject | undefined, Q extends Record<string, QueryParam>, B>
  extends RouteDocs {
  method: Route["method"];
  path: string;
  segments?: Record<string, string>;
  page?: true;
  scope: RouteScope;
  params?: P;
  query?: Q;
  body?: BodySpec<B>;
  /**
   * A body still checked where it is used (the engine's own checks on unknown input, with the words
   * the tests hold): documented here, read by the handler with bodyObject. Move it to `body` when
   * the record can say every refusal the same way.
   */
  engineBody?: BodySpec<unknown>;
  /** Query parameters the handler (or the engine) reads and checks itself: documented only. */
  handlerQuery?: Record<string, QueryParam>;
  /** Request headers the handler reads: documented only. */
  handlerHeaders?: Record<string, z.ZodType>;
  /** Every answer by status: the success and each error this route itself gives. */
  responses: Record<string, ResponseSpec>;
  /** [] where no token is asked (the document says so). */
  security?: readonly [];
  handle(app: App, input: RouteInput<Parsed<P>, QueryOf<Q>, B>, request: CompatRequest): Promise<CompatResponse>;
}

/** A record as the router, the access gate and the document read it. */
export interface RouteRecord extends Route, RouteDocs {
  scope: RouteScope;
  params?: z.ZodObject;
  query?: Record<string, QueryParam>;
  body?: BodySpec<unknown>;
  engineBody?: BodySpec<unknown>;
  handlerQuery?: Record<string, QueryParam>;
  handlerHeaders?: Record<string, z.ZodType>;
  responses: Record<string, ResponseSpec>;
  security?: readonly [];
}

/** The first refusal zod found, with the words the record gave it. */
function refusal(error: z.ZodError): HttpError {
  return new HttpError(400, error.issues[0]?.message ?? "Bad input.");
}

/** Reads a required body object; a 400 when the body is not a JSON object. */
export async function bodyObject(request: CompatRequest): Promise<Record<string, unknown>> {
  const body = await request.json();
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new HttpError(400, "The body must be a JSON object.");
  }
  return body as Record<string, unknown>;
}

/** Every value the query gave, by name, for the names a route reads. */
function queryValues(query: URLSearchParams, names: readonly string[]): Record<string, string[]> {
  return Object.fromEntries(names.map((name) => [name, query.getAll(name)]));
}

export function defineRoute<
  P extends z.ZodObject | undefined = undefined,
  Q extends Record<string, QueryParam> = Record<never, QueryParam>,
  B = undefined,
>(spec: RouteSpec<P, Q, B>): RouteRecord {
  const { handle, ...record } = spec;
  return {
    ...(record as Omit<RouteRecord, "handle">),
    async handle(app, request) {
      let params: unknown;
      if (spec.params) {
        const parsed = spec.params.safeParse(request.params);
        if (!parsed.success) throw refusal(parsed.error);
        params = parsed.data;
      }
      const query: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(queryValues(request.query, Object.keys(spec.query ?? {})))) {
        const parsed = spec.query![name]!.safeParse(value);
        if (!parsed.success) throw refusal(parsed.error);
        query[name] = parsed.data;
      }
      let body: unknown;
      if (spec.body) {
        const parsed = spec.body.schema.safeParse(await bodyObject(request));
        if (!parsed.success) throw refusal(parsed.error);
        body = parsed.data;
      }
      return handle(app, { params, query, body } as RouteInput<Parsed<P>, QueryOf<Q>, B>, request);
    },
  };
}

/**
 * A refinement that runs one of the engine's own checks (it throws a BadInputError with the words
 * the tests hold), so a body is refused with those words in the order the engine checks its fields.
 */
export const engineCheck =
  <T>(check: (value: T) => unknown) =>
  (value: T, ctx: z.RefinementCtx<T>): void => {
    try {
      check(value);
    } catch (error) {
      if (!(error instanceof BadInputError)) throw error;
      ctx.addIssue({ code: "custom", message: error.message });
    }
  };

/**
 * A field the engine's own check judges first, with its words: the check's result (the value
 * normalised: trimmed, null as absent) goes on to `shape`, which the document shows. `shape` must
 * accept whatever the check returns.
 */
export const judgedBy = <T extends z.ZodType>(check: (value: unknown) => unknown, shape: T) =>
  z.preprocess((value, ctx) => {
    try {
      return check(value);
    } catch (error) {
      if (!(error instanceof BadInputError)) throw error;
      ctx.addIssue({ code: "custom", message: error.message });
      return value;
    }
  }, shape);
