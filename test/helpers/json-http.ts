// One JSON request and its answer, as the tests that drive a spawned server over REST make it.

/** The body is null when the answer is not JSON (the status then tells what came back). */
export async function json(url: string, method = "GET", body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}
