import { signRecoverable } from "tiny-secp256k1";
import { bytesToHex, hashMessage, hexToBytes, serializeSignature, serializeTransaction, type Hex, type Signature } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { keccak256 } from "./keccak.ts";
import { typedDataHash } from "./typed-data.ts";

/**
 * viem's account of `privateKey`, whose signatures are made by libsecp256k1 (tiny-secp256k1, in
 * WebAssembly) instead of viem's JavaScript curve: the same bytes (RFC 6979 nonces, low s, as viem
 * signs by default), in about a third of the time; what it signs is hashed in WebAssembly too
 * (keccak.ts, typed-data.ts). Every chain transaction and every venue order is signed on the event
 * loop, so this is CPU every order pays two or three times.
 */
export function evmAccount(privateKey: Hex): PrivateKeyAccount {
  const account = privateKeyToAccount(privateKey);
  const key = hexToBytes(privateKey);
  const sign = (hash: Hex): Signature => {
    const { signature, recoveryId } = signRecoverable(hexToBytes(hash), key);
    return { r: bytesToHex(signature.subarray(0, 32)), s: bytesToHex(signature.subarray(32)), v: recoveryId ? 28n : 27n, yParity: recoveryId };
  };
  return {
    ...account,
    sign: async ({ hash }) => serializeSignature(sign(hash)),
    signMessage: async ({ message }) => serializeSignature(sign(hashMessage(message))),
    signTypedData: async (typedData) => serializeSignature(sign(typedDataHash(typedData))),
    signTransaction: async (transaction, { serializer = serializeTransaction } = {}) => {
      if (transaction.type === "eip4844") throw new Error("evmAccount does not sign blob transactions");
      return serializer(transaction, sign(keccak256(await serializer(transaction))));
    },
  };
}
