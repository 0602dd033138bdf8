// The server entry: configuration from the environment, the flock, the HTTP server. Prints one
// ready line, and on SIGTERM/SIGINT stops accepting, finishes in-flight writes, closes streams and
// exits 0.
import { loadConfig, ConfigError } from "./config.ts";
import { createApp } from "./app.ts";
import { startServer } from "./server/http.ts";

async function main(): Promise<void> {
  const config = loadConfig();
  const app = await createApp(config);
  const server = await startServer(app);
  console.log(`crows listening on ${server.url}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logLine(`crows: ${signal} received, finishing in-flight writes`);
    await server.close();
    await app.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `crows: ${error.message}` : error);
  process.exit(1);
});
