// crows as an A2A agent (docs/integrations.md "A2A"), through the official SDK's request handler and
// its express helpers: the agent card at /.well-known/agent-card.json, JSON-RPC at /a2a. The access
// gate has already admitted the request (401 without a token where one is configured); this door
// checks each method's scope the way REST does (a 403 naming it) and hands the principal to the
// executor, which calls the engine.
import type http from "node:http";
import express from "express";
import type { AgentCard } from "@a2a-js/sdk";
import { DefaultExecutionEventBusManager, DefaultRequestHandler, type ServerCallContext } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler } from "@a2a-js/sdk/server/express";
import {
  TaskState,
  type CancelTaskRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import type { App } from "../../app.ts";
import { principalOf } from "../access.ts";
import { missingScopeMessage, type Scope } from "../../access/scopes.ts";
import { API_VERSION } from "../../../compat/openapi/index.ts";
import { CrowsExecutor } from "./executor.ts";
import { Caller, callerIn, mayDecideIn } from "./caller.ts";
import { ListTaskStore } from "./task-store.ts";
import { ConflictError, ForbiddenError } from "../../base/errors.ts";
import { requirePostScope } from "../../access/post-scope.ts";
import { CrowsPushSender, CrowsPushStore } from "./push.ts";
import { A2A_STREAM_METHODS, type StreamGate } from "../stream-caps.ts";
import { sendError } from "../../http/http-error.ts";

export const A2A_PATH = "/a2a";
export const AGENT_CARD_PATH = "/.well-known/agent-card.json";

/** The scope each JSON-RPC method needs (a message that continues a task is a reply: decide). */
function scopeOf(body: {
  method?: unknown;
  params?: { message?: { taskId?: unknown; metadata?: { nest_id?: unknown } } };
}): Scope {
  switch (body.method) {
    case "SendMessage":
    case "SendStreamingMessage":
      // A nest post: write, or decide for the owner's reply to an ask (the executor applies that rule).
      if (body.params?.message?.metadata?.nest_id !== undefined) return "read";
      return typeof body.params?.message?.taskId === "string" && body.params.message.taskId !== "" ? "decide" : "write";
    case "CancelTask":
    case "CreateTaskPushNotificationConfig":
    case "DeleteTaskPushNotificationConfig":
    // A push config names a URL (which may hold a secret): read back only by whoever may set one.
    case "GetTaskPushNotificationConfig":
    case "ListTaskPushNotificationConfigs":
      return "write";
    default:
      return "read";
  }
}

const BEARER = { description: "A crows token (CROWS_TOKEN or a named token).", scheme: "bearer", bearerFormat: "" };

export function agentCard(baseUrl: string): AgentCard {
  return {
    name: "crows",
    description:
      "A flock of LLM-backed crows that works a todo list under its owner's approval: send a list (one item a line) and get each item's answer as an artifact.",
    supportedInterfaces: [
      { url: `${baseUrl}${A2A_PATH}`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    ],
    provider: undefined,
    version: API_VERSION,
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: { bearer: { scheme: { $case: "httpAuthSecurityScheme", value: BEARER } } },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [
      {
        id: "work-a-todo-list",
        name: "Work a todo list",
        description:
          "Send a todo list, one item a line (1-50). Each item is triaged, worked and answered; approvals it needs come back as input-required for a caller with the decide scope (reply approve or reject, or decide several at once with a data part {decisions: [...]}). Needs write.",
        tags: ["todo", "tasks", "approval"],
        examples: ["Buy milk\nWrite a haiku about crows"],
        inputModes: ["text/plain"],
        outputModes: ["text/plain"],
        securityRequirements: [],
      },
      {
        id: "talk-in-a-nest",
        name: "Talk in a nest",
        description:
          'Post a message in a nest: send it with metadata {"nest_id", "author"?, "to"?, "refers_to"?}; the answer is a message holding the stored record (its kind as the nest tagged it). Needs write, or decide for the owner\'s reply to an ask.',
        tags: ["nest", "chat"],
        examples: ["@Quill what is on the list today?"],
        inputModes: ["text/plain"],
        outputModes: ["text/plain"],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/**
 * Tasks are lists (task-store.ts): any instance answers for one. Cancelling cancels the task's list
 * first (docs/rules.md "Cancelling a list"), then lets the SDK settle the task; resubscribing where
 * no stream of the task runs follows its list's events.
 */
class CrowsRequestHandler extends DefaultRequestHandler {
  private readonly buses: DefaultExecutionEventBusManager;

  constructor(
    card: AgentCard,
    private readonly app: App,
    private readonly tasks: ListTaskStore,
    private readonly crows: CrowsExecutor,
    buses = new DefaultExecutionEventBusManager(),
  ) {
    const pushes = app.webhooks.pushes;
    super(
      card,
      tasks,
      crows,
      buses,
      new CrowsPushStore(pushes),
      new CrowsPushSender(pushes, (line) => app.logLine(line)),
    );
    this.buses = buses;
  }

  /** The config as stored, never the token or the credentials just given (docs/security.md). */
  override async createTaskPushNotificationConfig(params: TaskPushNotificationConfig, context: ServerCallContext) {
    const saved = await super.createTaskPushNotificationConfig(params, context);
    return {
      ...saved,
      token: "",
      authentication: saved.authentication && { ...saved.authentication, credentials: "" },
    };
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext) {
    const record = await this.tasks.record(params.id);
    if (record) {
      const cancelled = await this.app.flock
        .cancelList({ listId: record.listId, actor: callerIn(context).actor })
        .then(() => true)
        .catch((error: unknown) => {
          if (!(error instanceof ConflictError)) throw error;
          return false; // finished: the SDK answers not cancelable
        });
      // No stream of the task here: the task is cancelled once its list has finished.
      if (cancelled && !this.buses.getByTaskId(params.id, context))
        await this.tasks.finished(params.id, mayDecideIn(context));
    }
    return super.cancelTask(params, context);
  }

  override async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse> {
    const streamedHere = this.buses.getByTaskId(params.id, context) !== undefined;
    yield* super.resubscribe(params, context); // the task; and its stream's updates when it runs here
    if (streamedHere) return;
    const mayDecide = mayDecideIn(context);
    const fold = (await this.tasks.fold(params.id, mayDecide))?.clone();
    // A task waiting on a caller who may decide waits for that caller's reply, not for the log.
    if (!fold || fold.terminal || (mayDecide && fold.status.state === TaskState.TASK_STATE_INPUT_REQUIRED)) return;
    for await (const update of this.crows.updatesAfter(fold, mayDecide)) {
      if (update.kind === "statusUpdate") yield { payload: { $case: "statusUpdate", value: update.data } };
      if (update.kind === "artifactUpdate") yield { payload: { $case: "artifactUpdate", value: update.data } };
    }
  }
}

export interface A2aDoor {
  matches(pathname: string): boolean;
  serve(req: http.IncomingMessage, res: http.ServerResponse): void;
}

/** `streams`: the stream caps a streaming method's answer counts against (src/server/stream-caps.ts). */
export function createA2aDoor(app: App, baseUrl: () => string, streams?: StreamGate): A2aDoor {
  let router: express.Express | undefined;
  const build = () => {
    const tasks = new ListTaskStore(app);
    const executor = new CrowsExecutor(app, tasks);
    const handler = new CrowsRequestHandler(agentCard(baseUrl()), app, tasks, executor);
    const server = express();
    server.disable("x-powered-by");
    // Served in the protocol's JSON form (a security scheme is keyed by its kind), which the SDK's
    // card resolver reads back into its own types; the handler keeps the typed card.
    const wireCard = { ...agentCard(baseUrl()), securitySchemes: { bearer: { httpAuthSecurityScheme: BEARER } } };
    server.use(AGENT_CARD_PATH, agentCardHandler({ agentCardProvider: async () => wireCard as unknown as AgentCard }));
    server.use(A2A_PATH, express.json({ limit: "1mb" }), (req, res, next) => {
      void (async () => {
        const principal = principalOf(req);
        // A push config on a send (a reply too) is set as CreateTaskPushNotificationConfig is: write as well.
        const needed = [scopeOf(req.body ?? {})];
        if (req.body?.params?.configuration?.taskPushNotificationConfig) needed.push("write");
        const scope = needed.find((s) => !principal.scopes.includes(s));
        if (scope) {
          res.status(403).json({ message: missingScopeMessage(scope), scope });
          return;
        }
        // A streamed answer holds its socket for the task's life: a slot, or a 429/503 past a cap.
        if (streams && A2A_STREAM_METHODS.has(req.body?.method)) {
          try {
            streams.admit(req, res);
          } catch (error) {
            sendError(res, error, app.logLine);
            return;
          }
        }
        const meta = req.body?.params?.message?.metadata;
        if (typeof meta?.nest_id === "string") {
          // A nest post: REST's rule (write, or decide for the owner's reply to an ask).
          try {
            await requirePostScope(app.prisma, principal, meta.nest_id, {
              author: meta.author ?? "owner",
              refers_to: meta.refers_to,
            });
          } catch (error) {
            if (!(error instanceof ForbiddenError)) throw error;
            res.status(403).json({ message: error.message, scope: "write" });
            return;
          }
        }
        next();
      })().catch(next);
    });
    server.use(
      A2A_PATH,
      jsonRpcHandler({
        requestHandler: handler,
        // The principal rides in each call's context (src/server/a2a/caller.ts).
        userBuilder: async (req) => new Caller(principalOf(req)),
      }),
    );
    return server;
  };
  return {
    matches: (pathname) => pathname === A2A_PATH || pathname === `${A2A_PATH}/` || pathname === AGENT_CARD_PATH,
    serve(req, res) {
      router ??= build();
      router(req as express.Request, res as express.Response);
    },
  };
}
