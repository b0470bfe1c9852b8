import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress } from "node:zlib";

const DEBIAN = "/usr/bin/chromium";

/**
 * The Chromium the browser tests drive: CHROMIUM_PATH when set; else the one @sparticuz/chromium ships
 * inside its npm package (a linux-x64 headless shell that needs only glibc, expat and NSS), so that
 * `npm ci && npm test` needs no system package; else, where that binary cannot run, Debian's.
 */
export async function chromiumPath(cacheDir: string): Promise<string> {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  if (process.platform === "linux" && process.arch === "x64") return inflateNpmChromium(cacheDir);
  if (existsSync(DEBIAN)) return DEBIAN;
  throw new Error(`No Chromium for ${process.platform}-${process.arch}: @sparticuz/chromium ships linux-x64 only; install Debian's (apt-get install -y chromium) or set CHROMIUM_PATH.`);
}

/**
 * Unpacks the package's brotli-compressed binary once per version under cacheDir. Not through the package's
 * executablePath(): that writes a fixed /tmp/chromium in place and reuses whatever is there, so a run
 * killed while unpacking, or another version's binary, would be what gets launched. Here the binary is
 * written beside its final name and renamed, so the name only ever holds a whole binary.
 */
async function inflateNpmChromium(cacheDir: string): Promise<string> {
  // The package exports only its module, whose file is build/{esm,cjs}/index.*: the package root is two up.
  const root = join(dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium")), "..", "..");
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  // A folder per version: Chromium makes a locales/ folder beside its binary.
  const binary = join(cacheDir, version, "chromium");
  if (existsSync(binary)) return binary;
  mkdirSync(dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  await pipeline(createReadStream(join(root, "bin", "chromium.br")), createBrotliDecompress(), createWriteStream(partial, { mode: 0o755 }));
  renameSync(partial, binary);
  return binary;
}
