// The tool servers an owner connects (docs/tools.md "Connecting servers"), for the admin scope (the
// access gate asks it for /api/tools/servers*: src/server/route-scopes.ts). POST adds one (env and
// header values are write-only: the answer and every list show their names only); GET lists them
// with their state (never starting one), GET one also lists its tools (starting it if needed);
// DELETE removes it and stops its process; POST .../policies and .../nests change who may use what.
import { bodyObject, type Route } from "./router.ts";

export const toolServerRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/tools/servers",
    async handle(app, request) {
      const body = await bodyObject(request);
      const view = await app.tools.registry.add(
        {
          name: body.name,
          transport: body.transport,
          command: body.command,
          args: body.args,
          env: body.env,
          cwd: body.cwd,
          url: body.url,
          headers: body.headers,
          nests: body.nests,
          policies: body.policies,
        },
        request.principal.actor,
      );
      return { status: 201, json: view, headers: { "cache-control": "no-store" } };
    },
  },
  {
    method: "GET",
    path: "/api/tools/servers",
    async handle(app) {
      return { status: 200, json: { servers: await app.tools.statuses() } };
    },
  },
  {
    method: "GET",
    path: "/api/tools/servers/{server_id}",
    async handle(app, request) {
      return { status: 200, json: await app.tools.status(request.params.server_id!, { list: true }) };
    },
  },
  {
    method: "DELETE",
    path: "/api/tools/servers/{server_id}",
    async handle(app, request) {
      await app.tools.registry.remove(request.params.server_id!, request.principal.actor);
      return { status: 204 };
    },
  },
  {
    method: "POST",
    path: "/api/tools/servers/{server_id}/policies",
    async handle(app, request) {
      const body = await bodyObject(request);
      await app.tools.registry.setPolicies(request.params.server_id!, body.policies, request.principal.actor);
      return { status: 200, json: await app.tools.status(request.params.server_id!) };
    },
  },
  {
    method: "POST",
    path: "/api/tools/servers/{server_id}/nests",
    async handle(app, request) {
      const body = await bodyObject(request);
      await app.tools.registry.setNests(request.params.server_id!, body.nests, request.principal.actor);
      return { status: 200, json: await app.tools.status(request.params.server_id!) };
    },
  },
];
