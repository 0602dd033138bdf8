// /decide/<claims>.<mac>: the decide links a delivery carries (docs/webhooks.md "Decide links";
// the pages are compat/decide-pages.ts). The link is the credential, so no token is asked (scope
// "link": the access gate admits the request as the link holder, who holds no scope anywhere
// else). A GET (or HEAD) shows a page and changes nothing; the page's button POSTs, and the POST
// decides.
import { z } from "zod";
import { LINK_SEGMENT } from "../src/webhooks/links.ts";
import { answerLink } from "./decide-pages.ts";
import { answer, refused } from "./responses.ts";
import { defineRoute, type ResponseSpec } from "./route.ts";

const page = (description: string): ResponseSpec => answer(description, z.string(), "text/html");
const Link = z.object({
  link: z
    .string()
    .regex(new RegExp(`^${LINK_SEGMENT}$`))
    .describe("<claims>.<mac>, as the delivery gave it."),
});
const refusedPages = {
  "404": page("Not valid: changed, cut short, or not made by this server. Nothing changes."),
  "409": page("Already decided (this link, or the other of its pair, was used). Nothing changes."),
  "410": page("Expired: the approval's deadline passed, and silence counts as no. Nothing changes."),
};
const shared = {
  path: "/decide/{link}",
  segments: { link: LINK_SEGMENT },
  page: true as const,
  scope: "link" as const,
  tags: ["webhooks"],
  security: [] as const,
  params: Link,
};

export const decideRoutes = [
  defineRoute({
    ...shared,
    method: "GET",
    operationId: "showDecideLink",
    summary: "What the link would decide, with a button; changes nothing (HEAD answers the same without the page)",
    responses: { "200": page("The confirmation page."), ...refusedPages },
    handle: (app, _input, request) => answerLink(app, request),
  }),
  defineRoute({
    ...shared,
    method: "POST",
    operationId: "useDecideLink",
    summary:
      "Decide: the verdict (or, for an ask, the owner's reply with its approval phrase), with the link as the actor",
    responses: {
      "200": page("Decided; the link is used up."),
      "400": page('A reason that is too long or not plain text (docs/rules.md "Reasons"). Nothing changes.'),
      "403": refused("A browser origin that is not this server's."),
      ...refusedPages,
    },
    handle: (app, _input, request) => answerLink(app, request),
  }),
];
