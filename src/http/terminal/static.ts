import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import fastifyStatic from "@fastify/static";

// The terminal loads nothing from elsewhere (no fonts, no CDNs), so the policy can be strict; inline
// style attributes are React's, and framing is refused so that no page can overlay the order ticket.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join("; ");

/**
 * Whether a path is the API's, never the terminal's: leading slashes collapsed and any case, `//v1/markets` (a base
 * URL ending in `/` joined to a path) or `/V1/markets` is an API path a client mistyped, to be told so in JSON, not
 * given the terminal's page with a 200.
 */
export function isApiPath(path: string): boolean {
  const api = path.replace(/^\/+/, "/").toLowerCase();
  return api === "/v1" || api.startsWith("/v1/");
}

/** A path naming a file of the terminal's build: one with a file extension. */
const FILE = /\.[A-Za-z0-9]+$/;

/**
 * Whether the terminal serves a path (decoded): a path with a file extension names a file of the build, served if the
 * build has it (not a directory, no segment hidden or climbing out of the build: none begins with a dot); any other
 * path outside /v1 is a client route, given index.html (the app routes in the browser). A method the terminal does
 * not take is 405 on a path it serves, and 404 on one it does not, as GET is.
 */
export function terminalServes(assetsDir: string, path: string): boolean {
  if (isApiPath(path)) return false;
  return !FILE.test(path) || servesFile(assetsDir, path);
}

/** Whether a path (decoded) names a file of `dir`: not a directory, no segment hidden or climbing out of `dir` (none begins with a dot). */
export function servesFile(dir: string, path: string): boolean {
  const file = join(dir, path);
  return !path.includes("\0") && !path.split("/").some((segment) => segment.startsWith(".")) && existsSync(file) && statSync(file).isFile();
}

/**
 * Serves the built terminal at `/`: each path it serves (terminalServes), a file of the build or a client route's
 * index.html. /v1 paths never fall back: an unknown API route stays the API's JSON 404.
 */
export async function registerTerminalAssets(app: FastifyInstance, assetsDir: string): Promise<void> {
  await app.register(fastifyStatic, { root: assetsDir, serve: false });

  app.get("/*", { schema: { hide: true } }, async (req, reply) => {
    const path = decodeURIComponent(req.url.split("?")[0]!);
    if (!terminalServes(assetsDir, path)) return reply.callNotFound();
    reply.header("x-content-type-options", "nosniff");
    reply.header("referrer-policy", "same-origin");
    // On every file, not only the client routes' index.html: /index.html asked for by name is the same page.
    reply.header("content-security-policy", CSP);
    if (FILE.test(path)) {
      // Vite puts a content hash in every asset's name, so a name always means the same bytes.
      const immutable = path.startsWith("/assets/");
      return reply.sendFile(path.slice(1), { maxAge: immutable ? "365d" : 0, immutable });
    }
    if (!existsSync(join(assetsDir, "index.html"))) {
      return reply.status(503).type("text/plain; charset=utf-8").send("The web terminal is not built yet: run `npm run build:terminal` (npm ci does it).");
    }
    reply.header("cache-control", "no-cache");
    return reply.sendFile("index.html", { cacheControl: false });
  });
}
