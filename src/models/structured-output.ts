// The Sentry asks for its JSON schema where the provider has structured output (Output.object with
// the zod TriageSchema: OpenAI's strict json_schema, or the provider's own equivalent). A provider
// that refuses the schema (a 400/422, or an error naming the schema) is asked in plain JSON mode
// from then on, and the log says so once. The reply stays text: parseTriage validates it, exactly
// as before, so a schema answer and a JSON-mode answer reach the pipeline the same way.
import { APICallError, NoObjectGeneratedError, Output } from "ai";
import { TriageSchema } from "./formats.ts";

type SdkUsage = { inputTokens?: number | undefined; outputTokens?: number | undefined } | undefined;
type Asked = { text: string; usage: SdkUsage; headers?: Record<string, string> };
type Called = { text: string; usage: SdkUsage; response?: { headers?: Record<string, string> } };

export class StructuredTriage {
  private refused = false;

  constructor(
    private readonly modelName: string,
    private readonly wanted: boolean,
    private readonly logLine: ((line: string) => void) | undefined,
  ) {}

  get enabled(): boolean {
    return this.wanted && !this.refused;
  }

  /**
   * Asks with the schema. Returns undefined when the provider refused it (the caller then asks in
   * JSON mode); rethrows any other trouble for the caller to classify.
   */
  async ask(
    call: (output: ReturnType<typeof Output.object>) => Promise<Called>,
    jsonModeFallback: boolean,
  ): Promise<Asked | undefined> {
    try {
      const result = await call(
        Output.object({ schema: TriageSchema, name: "triage", description: "The Sentry's call on one todo item" }),
      );
      return {
        text: result.text,
        usage: result.usage,
        ...(result.response?.headers ? { headers: result.response.headers } : {}),
      };
    } catch (error) {
      if (NoObjectGeneratedError.isInstance(error) && typeof error.text === "string")
        return {
          text: error.text,
          usage: error.usage,
          ...(error.response?.headers ? { headers: error.response.headers } : {}),
        };
      if (!refusedSchema(error)) throw error;
      this.refused = true;
      this.logLine?.(
        `model ${this.modelName}: the provider refused a JSON schema; the Sentry asks in ${jsonModeFallback ? "JSON mode" : "its prompt alone"} from now on`,
      );
      return undefined;
    }
  }
}

/** A 400/422 is how providers refuse a response_format they do not have. */
function refusedSchema(error: unknown): boolean {
  if (!APICallError.isInstance(error)) return false;
  const status = error.statusCode;
  if (status !== 400 && status !== 422) return false;
  return true;
}
