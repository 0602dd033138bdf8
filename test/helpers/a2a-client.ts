// The A2A SDK's own client against a crows server (docs/integrations.md "A2A"), with a bearer token
// when one is given, and the user messages the tests send.
import { randomUUID } from "node:crypto";
import { Role, type Message, type Part, type Task } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from "@a2a-js/sdk/client";

export async function a2aClient(url: string, token?: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set("authorization", `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(url);
}

export function userMessage(text: string, taskId = "", contextId = ""): Message {
  return messageOf([textPart(text)], taskId, contextId);
}

/** A user message of these parts (text, data), on a task when `taskId` is given. */
export function messageOf(parts: Part[], taskId = "", contextId = ""): Message {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export const textPart = (value: string): Part => ({
  content: { $case: "text", value },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});

export const dataPart = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "application/json",
});

export const sendParams = (message: Message) => ({
  tenant: "",
  message,
  configuration: undefined,
  metadata: undefined,
});

export const statusText = (task: Task): string =>
  task.status?.message?.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("") ?? "";

export const artifactIds = (task: Task): string[] => task.artifacts.map((a) => a.artifactId).sort();
