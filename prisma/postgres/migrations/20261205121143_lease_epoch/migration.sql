-- AlterTable
ALTER TABLE "Obligation" ADD COLUMN     "epoch" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "TodoList" ADD COLUMN     "epoch" INTEGER NOT NULL DEFAULT 0;
