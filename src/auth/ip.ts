import { BlockList, isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { AppError } from "../domain/errors.ts";

// A peer connecting over IPv6 to a dual-stack socket shows up as ::ffff:a.b.c.d; it is the same
// IPv4 client and must match IPv4 allowlist entries.
const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

function unmap(ip: string): string {
  return MAPPED_V4.exec(ip)?.[1] ?? ip;
}

function family(ip: string): "ipv4" | "ipv6" | undefined {
  const v = isIP(ip);
  return v === 4 ? "ipv4" : v === 6 ? "ipv6" : undefined;
}

interface Entry {
  address: string;
  prefix: number | undefined;
  type: "ipv4" | "ipv6";
}

/** Parses one allowlist entry: "203.0.113.7", "10.0.0.0/8", "2001:db8::/32". */
function parseEntry(entry: string): Entry | undefined {
  const [rawAddress, prefixText, extra] = entry.trim().split("/");
  const address = unmap(rawAddress ?? "");
  const type = family(address);
  if (type === undefined || extra !== undefined) return undefined;
  if (prefixText === undefined) return { address, prefix: undefined, type };
  const prefix = Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText) || prefix > (type === "ipv4" ? 32 : 128)) return undefined;
  return { address, prefix, type };
}

/** Validates and normalises an allowlist; an empty list means "no restriction" and becomes null. */
export function parseIpAllowlist(entries: readonly string[]): string[] | null {
  const parsed = entries.map((entry) => {
    const e = parseEntry(entry);
    if (e === undefined) {
      throw new AppError("invalid_request", `Not an IP address or CIDR block: ${JSON.stringify(entry)}.`, {
        fields: { ip_allowlist: "each entry must be an IPv4 or IPv6 address, optionally with a /prefix" },
      });
    }
    return e.prefix === undefined ? e.address : `${e.address}/${e.prefix}`;
  });
  return parsed.length === 0 ? null : [...new Set(parsed)];
}

/** True when `ip` is covered by the allowlist; a null allowlist allows every address. */
export function ipAllowed(allowlist: readonly string[] | null, ip: string): boolean {
  if (allowlist === null) return true;
  const address = unmap(ip);
  const type = family(address);
  if (type === undefined) return false;
  const list = new BlockList();
  for (const entry of allowlist) {
    // Entries were validated when the key was created; one that no longer parses grants nothing.
    const e = parseEntry(entry);
    if (e === undefined) continue;
    if (e.prefix === undefined) list.addAddress(e.address, e.type);
    else list.addSubnet(e.address, e.prefix, e.type);
  }
  return list.check(address, type);
}

/**
 * The network a rate limit counts an address by: an IPv4 address (or one mapped into IPv6) itself, an
 * IPv6 address by its /64, which one host usually holds whole (it could otherwise take a fresh budget
 * with each of its addresses). Written canonically, so that every spelling of it counts as one.
 */
export function addressNetwork(ip: string): string {
  const bare = ip.split("%")[0]!;
  if (!ipaddr.isValid(bare)) return bare.toLowerCase();
  const address = ipaddr.process(bare);
  if (address.kind() === "ipv4") return address.toString();
  return `${address.toNormalizedString().split(":").slice(0, 4).join(":")}::/64`;
}
