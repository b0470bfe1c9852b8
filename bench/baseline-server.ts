// The baseline: a bare node:http server. GET answers the bytes named by BASELINE_BODIES (a JSON file of
// path → body: the service's own answers, so both send the same bytes); POST echoes the request's body.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const bodies = new Map(Object.entries(JSON.parse(readFileSync(process.env.BASELINE_BODIES!, "utf8")) as Record<string, string>).map(([path, body]) => [path, Buffer.from(body)]));
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const body = req.method === "POST" ? Buffer.concat(chunks) : bodies.get(req.url ?? "");
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
    res.end(body);
  });
});
server.listen(0, "127.0.0.1", () => {
  const a = server.address();
  process.stdout.write(JSON.stringify({ port: typeof a === "object" && a ? a.port : 0 }) + "\n");
});
