// fetch for a Streamable HTTP tool server, with every answer's body cut off past a size: a server
// that floods gets its connection cut with a named error (tool_output_too_large), never crows's
// memory. Redirects are not followed across origins (the SDK's default is kept for the rest).
import { TOO_LARGE_MARK } from "./failure.ts";

export function cappedFetch(maxBytes: number) {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(url, init);
    if (!response.body) return response;
    let seen = 0;
    const limiter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(new Error(`${TOO_LARGE_MARK} (${maxBytes} bytes)`));
        else controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(limiter), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
