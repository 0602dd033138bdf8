// Builds the owner console (console/app/, Preact) into one script and one stylesheet with esbuild.
// Run at install (package.json postinstall) and, when the bundle is missing or older than its
// sources, by the server on the first request for it (console/serve.ts), so a checkout that skipped
// install, or an edited source, never serves a stale or absent page. Nothing is fetched at run time:
// every dependency is bundled, so the page works offline and never leaves the server's origin.
import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const CONSOLE_SOURCE_DIR = path.join(HERE, "app");
/** Gitignored: the built bundle. */
export const CONSOLE_DIST_DIR = path.join(HERE, "dist");
export const BUNDLE_FILES = ["app.js", "app.css"] as const;

/** Newest modification time among the console's sources (and this build script). */
export function newestSourceMtime(): number {
  let newest = statSync(fileURLToPath(import.meta.url)).mtimeMs;
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(CONSOLE_SOURCE_DIR);
  return newest;
}

/** True when every bundle file exists and is at least as new as every source. */
export function bundleIsFresh(): boolean {
  try {
    const sources = newestSourceMtime();
    return BUNDLE_FILES.every((file) => statSync(path.join(CONSOLE_DIST_DIR, file)).mtimeMs >= sources);
  } catch {
    return false;
  }
}

/** Builds the bundle into console/dist (each file written whole, then renamed into place). */
export async function buildConsole(): Promise<void> {
  const result = await build({
    entryPoints: { app: path.join(CONSOLE_SOURCE_DIR, "main.tsx") },
    bundle: true,
    write: false,
    outdir: CONSOLE_DIST_DIR,
    format: "esm",
    platform: "browser",
    target: ["es2020"],
    minify: true,
    sourcemap: false,
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    logLevel: "silent",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  mkdirSync(CONSOLE_DIST_DIR, { recursive: true });
  for (const file of result.outputFiles) {
    const temporary = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = Date.now();
  await buildConsole();
  console.log(
    `console: built ${BUNDLE_FILES.join(", ")} into ${path.relative(process.cwd(), CONSOLE_DIST_DIR)} in ${Date.now() - started} ms`,
  );
}
