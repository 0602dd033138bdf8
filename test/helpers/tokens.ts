// Named tokens for tests: made through the REST API as a client would, with the owner's header.
import * as assert from "uvu/assert";
import type { TestServer } from "./server.ts";

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

export interface MadeToken {
  id: string;
  name: string;
  scopes: string[];
  secret: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
}

/** POST /api/tokens as `as` (the owner's headers by default); asserts the 201. */
export async function makeToken(
  server: TestServer,
  name: string,
  scopes: string[],
  as: Record<string, string>,
  expiresInS?: number,
): Promise<MadeToken> {
  const response = await server.request(
    "POST",
    "/api/tokens",
    { name, scopes, ...(expiresInS === undefined ? {} : { expires_in_s: expiresInS }) },
    as,
  );
  assert.is(response.status, 201, `making ${name}: ${response.text}`);
  return response.body as MadeToken;
}
