// /decide/<claims>.<mac>: the decide links a delivery carries (docs/webhooks.md "Decide links";
// src/server/webhooks/decide.ts). The link is the credential, so no token is asked. A GET (or
// HEAD) shows a page and changes nothing; the page's button POSTs, and the POST decides.
import { refusal, type Paths } from "./types.ts";

const page = (description: string) => ({ description, content: { "text/html": { schema: { type: "string" } } } });
const link = {
  name: "link",
  in: "path",
  required: true,
  description: "<claims>.<mac>, as the delivery gave it.",
  schema: { type: "string", pattern: "^[A-Za-z0-9_-]{8,2000}\\.[A-Za-z0-9_-]{43}$" },
};
const refused = {
  "404": page("Not valid: changed, cut short, or not made by this server. Nothing changes."),
  "409": page("Already decided (this link, or the other of its pair, was used). Nothing changes."),
  "410": page("Expired: the approval's deadline passed, and silence counts as no. Nothing changes."),
};

export const decidePaths: Paths = {
  "/decide/{link}": {
    get: {
      operationId: "showDecideLink",
      summary: "What the link would decide, with a button; changes nothing (HEAD answers the same without the page)",
      tags: ["webhooks"],
      security: [],
      parameters: [link],
      responses: { "200": page("The confirmation page."), ...refused },
    },
    post: {
      operationId: "useDecideLink",
      summary:
        "Decide: the verdict (or, for an ask, the owner's reply with its approval phrase), with the link as the actor",
      tags: ["webhooks"],
      security: [],
      parameters: [link],
      responses: {
        "200": page("Decided; the link is used up."),
        "403": refusal("A browser origin that is not this server's."),
        ...refused,
      },
    },
  },
};
