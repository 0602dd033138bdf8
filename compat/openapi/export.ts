// The bulk export (GET /api/export/*): filled in with the export routes.
import type { Paths } from "./types.ts";

export const exportPaths: Paths = {};
