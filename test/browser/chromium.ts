import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress } from "node:zlib";
import { extract } from "tar-fs";

/** How to launch a Chromium: the binary, and the environment it runs in. */
export interface ChromiumLaunch {
  executablePath: string;
  env?: Record<string, string>;
}

/**
 * The Chromium the browser tests drive: CHROMIUM_PATH when set; else the one @sparticuz/chromium ships
 * inside its npm package (a linux-x64 headless shell) with the NSS, NSPR and expat libraries the package
 * ships beside it, found through LD_LIBRARY_PATH, so that `npm ci && npm test` needs no system package
 * (glibc aside). The package ships linux-x64 only: elsewhere CHROMIUM_PATH must name a Chromium.
 */
export async function chromiumLaunch(cacheDir: string): Promise<ChromiumLaunch> {
  if (process.env.CHROMIUM_PATH) return { executablePath: process.env.CHROMIUM_PATH };
  if (process.platform === "linux" && process.arch === "x64") return inflateNpmChromium(cacheDir);
  throw new Error(`No Chromium for ${process.platform}-${process.arch}: @sparticuz/chromium ships linux-x64 only; set CHROMIUM_PATH to a Chromium's binary.`);
}

/**
 * Unpacks the package's brotli-compressed binary and its libraries (`al2023.tar.br`: lib/libnss3.so…)
 * once per version under cacheDir. Not through the package's executablePath(): that writes a fixed
 * /tmp/chromium in place and reuses whatever is there, so a run killed while unpacking, or another
 * version's binary, would be what gets launched; and it unpacks the libraries only on Amazon Linux. Here
 * each is written beside its final name and renamed, so the name only ever holds a whole binary or folder.
 */
async function inflateNpmChromium(cacheDir: string): Promise<ChromiumLaunch> {
  // The package exports only its module, whose file is build/{esm,cjs}/index.*: the package root is two up.
  const root = join(dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium")), "..", "..");
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  // A folder per version: Chromium makes a locales/ folder beside its binary.
  const binary = join(cacheDir, version, "chromium");
  const libraries = join(cacheDir, version, "al2023");
  mkdirSync(dirname(binary), { recursive: true });
  await unpack(binary, (partial) => createWriteStream(partial, { mode: 0o755 }), join(root, "bin", "chromium.br"));
  await unpack(libraries, (partial) => extract(partial), join(root, "bin", "al2023.tar.br"));
  const path = [resolve(libraries, "lib"), process.env.LD_LIBRARY_PATH].filter(Boolean).join(":");
  return { executablePath: binary, env: { ...(process.env as Record<string, string>), LD_LIBRARY_PATH: path } };
}

/** Decompresses a brotli file into `to` (a file, or a folder through tar) unless it is there already. */
async function unpack(to: string, target: (partial: string) => NodeJS.WritableStream, source: string): Promise<void> {
  if (existsSync(to)) return;
  const partial = `${to}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  await pipeline(createReadStream(source), createBrotliDecompress(), target(partial));
  renameSync(partial, to);
}
