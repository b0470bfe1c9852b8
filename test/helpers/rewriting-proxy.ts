// Test support: an HTTP proxy on loopback in front of a venue simulator, which passes every request on
// unchanged and lets a test change what the venue answers: a field it leaves out, a value the adapter
// cannot model. The simulators always answer what the adapters model; this is the venue that does not.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { request } from "undici";

export interface RewritingProxy {
  /** The simulator's REST base URL, through the proxy: give this to the adapter (its stream goes to the simulator directly). */
  url: string;
  /** What the proxy does to each JSON answer of a 2xx: given the request's path (without its query), the body to answer instead. */
  rewrite: (path: string, body: unknown) => unknown;
  stop(): Promise<void>;
}

/** A proxy to `target`, a simulator's REST base URL (its path is kept), answering as the venue does until `rewrite` is set. */
export async function startRewritingProxy(target: string): Promise<RewritingProxy> {
  const origin = new URL(target).origin;
  const proxy: RewritingProxy = { url: "", rewrite: (_path, body) => body, stop: async () => undefined };
  const server = createServer((req, res) => {
    void forward(req).then(
      ({ status, contentType, text }) => {
        const path = new URL(req.url ?? "/", origin).pathname;
        const json = status >= 200 && status <= 299 && contentType.includes("application/json") && text !== "";
        res.writeHead(status, { "content-type": contentType }).end(json ? JSON.stringify(proxy.rewrite(path, JSON.parse(text))) : text);
      },
      () => res.destroy(),
    );
  });
  const forward = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const { host: _host, connection: _connection, "content-length": _length, ...headers } = req.headers;
    const answer = await request(origin + (req.url ?? "/"), {
      method: req.method as "GET" | "POST" | "DELETE",
      headers: headers as Record<string, string>,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    const contentType = answer.headers["content-type"];
    return { status: answer.statusCode, contentType: typeof contentType === "string" ? contentType : "", text: await answer.body.text() };
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${new URL(target).pathname.replace(/\/$/, "")}`;
  proxy.stop = () => new Promise((resolve) => server.close(() => resolve()));
  return proxy;
}
