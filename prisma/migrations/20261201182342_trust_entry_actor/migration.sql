-- AlterTable
ALTER TABLE "Approval" ADD COLUMN "decidedByWebhookId" TEXT;

-- AlterTable (added in place: a redefinition would copy the whole history)
ALTER TABLE "TrustEntry" ADD COLUMN "decidedBy" TEXT NOT NULL DEFAULT '';
ALTER TABLE "TrustEntry" ADD COLUMN "decidedByTokenId" TEXT;
ALTER TABLE "TrustEntry" ADD COLUMN "decidedByTokenName" TEXT;
ALTER TABLE "TrustEntry" ADD COLUMN "decidedByWebhookId" TEXT;

-- Entries written before take the decider of the approval that wrote them: holder flock was moved
-- by the triage verdict of the item, any other holder by its output verdict. The triage/watch
-- entries of the Sentry answer asks, whose replier only the log names: they stay empty.
UPDATE "TrustEntry" SET
  "decidedBy" = COALESCE((SELECT a."decidedBy" FROM "Approval" a WHERE a."itemId" = "TrustEntry"."subject" AND a."target" = (CASE WHEN "TrustEntry"."holder" = 'flock' THEN 'triage' ELSE 'output' END) AND a."status" = "TrustEntry"."verdict"), ''),
  "decidedByTokenId" = (SELECT a."decidedByTokenId" FROM "Approval" a WHERE a."itemId" = "TrustEntry"."subject" AND a."target" = (CASE WHEN "TrustEntry"."holder" = 'flock' THEN 'triage' ELSE 'output' END) AND a."status" = "TrustEntry"."verdict"),
  "decidedByTokenName" = (SELECT a."decidedByTokenName" FROM "Approval" a WHERE a."itemId" = "TrustEntry"."subject" AND a."target" = (CASE WHEN "TrustEntry"."holder" = 'flock' THEN 'triage' ELSE 'output' END) AND a."status" = "TrustEntry"."verdict")
WHERE "taskType" <> 'triage/watch';
