import { concat, domainSeparator, encodeAbiParameters, hashTypedData, toHex, type HashTypedDataParameters, type Hex, type TypedData, type TypedDataDomain } from "viem";
import { keccak256 } from "./keccak.ts";
import { BoundedMap } from "../domain/bounded-map.ts";

/** How a struct of static fields only is hashed: its type hash, then each field as one ABI word. */
interface StaticStruct {
  params: { type: string }[];
  typeHash: Hex;
  names: string[];
}

/** A field encoded in place (EIP-712's atomic types): no string, bytes, array or struct, which are hashed first. */
const ATOMIC = /^(u?int\d+|address|bool|bytes\d+)$/;
const structs = new WeakMap<object, Map<string, StaticStruct | null>>();
/** Domain separators by domain: a few per venue (one per exchange contract), kept up to DOMAINS_KEPT. */
const DOMAINS_KEPT = 256;
const separators = new BoundedMap<string, Hex>(DOMAINS_KEPT);

/**
 * The EIP-712 digest of typed data, as viem's hashTypedData answers it (a property test compares them).
 * viem hashes the domain and the struct's type again for every message, by keccak in JavaScript:
 * ~0.2 ms a venue order. Here the domain separator and the type hash are kept, and a struct of atomic
 * fields (every venue's order) is one ABI encoding and two keccaks (keccak.ts); any other shape is
 * viem's. The fields are checked as viem checks them: encodeAbiParameters refuses an integer out of
 * range, a malformed address or a bytesN of the wrong size.
 */
export function typedDataHash<const T extends TypedData | Record<string, unknown>, P extends keyof T | "EIP712Domain">(parameters: HashTypedDataParameters<T, P>): Hex {
  const { domain = {}, types, primaryType, message } = parameters as unknown as {
    domain?: TypedDataDomain;
    types: Record<string, readonly { name: string; type: string }[]>;
    primaryType: string;
    message: Record<string, unknown>;
  };
  const struct = "EIP712Domain" in types ? null : staticStruct(types, primaryType);
  if (struct === null) return hashTypedData(parameters);
  const structHash = keccak256(encodeAbiParameters(struct.params, [struct.typeHash, ...struct.names.map((n) => message[n])]));
  return keccak256(concat(["0x1901", separator(domain), structHash]));
}

function staticStruct(types: Record<string, readonly { name: string; type: string }[]>, primaryType: string): StaticStruct | null {
  let byType = structs.get(types);
  if (byType === undefined) structs.set(types, (byType = new Map()));
  let struct = byType.get(primaryType);
  if (struct === undefined) {
    const fields = types[primaryType];
    struct =
      fields === undefined || !fields.every((f) => ATOMIC.test(f.type))
        ? null
        : {
            params: [{ type: "bytes32" }, ...fields.map((f) => ({ type: f.type }))],
            typeHash: keccak256(toHex(`${primaryType}(${fields.map((f) => `${f.type} ${f.name}`).join(",")})`)),
            names: fields.map((f) => f.name),
          };
    byType.set(primaryType, struct);
  }
  return struct;
}

function separator(domain: TypedDataDomain): Hex {
  // Present or absent matters (an absent field is not part of the domain's type), so undefined is kept apart from "".
  const key = JSON.stringify([domain.name ?? null, domain.version ?? null, domain.chainId === undefined ? null : String(domain.chainId), domain.verifyingContract ?? null, domain.salt ?? null]);
  let hash = separators.get(key);
  if (hash === undefined) {
    hash = domainSeparator({ domain });
    separators.set(key, hash);
  }
  return hash;
}
