// The webhook management API (docs/webhooks.md "Managing endpoints"), for a holder of the admin
// scope (the access gate asks it: src/server/route-scopes.ts): add, list, remove, rotate the
// secret, page deliveries, redeliver, recover. The routes are the compat router's kind.
import { bodyObject, Router, type Route } from "../../../compat/router.ts";

/** The paths this file answers (the access gate and the compat router see them first). */
export const isWebhookApiPath = (pathname: string): boolean =>
  pathname === "/api/webhooks" || pathname.startsWith("/api/webhooks/");

export const webhookRoutes: Route[] = [
  {
    method: "POST",
    path: "/api/webhooks",
    async handle(app, request) {
      const body = await bodyObject(request);
      return {
        status: 201,
        json: await app.webhooks.endpoints.add({ url: body.url, events: body.events, description: body.description }),
      };
    },
  },
  {
    method: "GET",
    path: "/api/webhooks",
    async handle(app) {
      return { status: 200, json: { webhooks: await app.webhooks.endpoints.list() } };
    },
  },
  {
    method: "DELETE",
    path: "/api/webhooks/{id}",
    async handle(app, request) {
      await app.webhooks.endpoints.remove(request.params.id!);
      return { status: 204 };
    },
  },
  {
    method: "POST",
    path: "/api/webhooks/{id}/rotate-secret",
    async handle(app, request) {
      return { status: 200, json: await app.webhooks.endpoints.rotate(request.params.id!) };
    },
  },
  {
    method: "GET",
    path: "/api/webhooks/{id}/deliveries",
    async handle(app, request) {
      return {
        status: 200,
        json: await app.webhooks.endpoints.deliveries(
          request.params.id!,
          request.query.get("cursor") ?? undefined,
          request.query.get("limit") ?? undefined,
        ),
      };
    },
  },
  {
    method: "POST",
    path: "/api/webhooks/{id}/deliveries/{delivery_id}/redeliver",
    async handle(app, request) {
      await app.webhooks.endpoints.redeliver(request.params.id!, request.params.delivery_id!);
      app.webhooks.sender.wake();
      return { status: 202, json: { id: request.params.delivery_id } };
    },
  },
  {
    method: "POST",
    path: "/api/webhooks/{id}/recover",
    async handle(app, request) {
      const body = await bodyObject(request);
      const recovered = await app.webhooks.endpoints.recover(request.params.id!, body.since_event_id);
      app.webhooks.sender.wake();
      return { status: 202, json: recovered };
    },
  },
];

export const webhookRouter = (): Router => new Router().add(...webhookRoutes);
