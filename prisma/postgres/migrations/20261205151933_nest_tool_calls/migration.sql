-- AlterTable
ALTER TABLE "ToolCall" ADD COLUMN     "nestId" TEXT NOT NULL DEFAULT '';
