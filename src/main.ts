// `npm start`: the same code path as `crows serve` (src/ops/serve.ts), run in this process so a
// signal sent to it reaches the server itself.
import { serve } from "./ops/serve.ts";

await serve();
