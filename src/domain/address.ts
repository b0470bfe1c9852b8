import { getAddress, zeroAddress } from "viem";

/**
 * Why `v` is not an address money may be paid to, or undefined when it is: 0x and 40 hex digits, all lower
 * case or with a valid EIP-55 checksum (a mixed-case address whose checksum is wrong is a typo to refuse, not
 * to guess), and not the zero address, which burns what it is sent.
 */
export function addressProblem(v: string): string | undefined {
  if (!/^0x[0-9a-fA-F]{40}$/.test(v)) return "must be a 0x address of 40 hex digits";
  if (v !== v.toLowerCase() && getAddress(v) !== v) return `has a wrong checksum: send it checksummed (${getAddress(v)}) or all in lower case`;
  if (v.toLowerCase() === zeroAddress) return "must not be the zero address";
  return undefined;
}
