import { describe, expect, it } from "vitest";
import { AppError } from "../domain/errors.ts";
import { validateWithdrawal } from "./validate.ts";

const TO = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"; // an EIP-55 test vector
const body = { amount_usdc: "12.5", to_address: TO };

function refused(b: unknown, session = false): Record<string, string> {
  try {
    validateWithdrawal(b, { session });
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    expect((e as AppError).code).toBe("invalid_request");
    return (e as AppError).details!.fields as Record<string, string>;
  }
  throw new Error("accepted");
}

describe("validateWithdrawal", () => {
  it("names the Idempotency-Key header, not client_withdrawal_id, when the header's value is no idempotency key", () => {
    expect(() => validateWithdrawal({ ...body, client_withdrawal_id: "w-1" }, { session: false, idempotencyKey: "k".repeat(65) })).toThrow(
      "Invalid withdrawal: Idempotency-Key must be 1-64 printable ASCII characters (an id of others goes in client_withdrawal_id).",
    );
    // "" and "ké" sent in UTF-8, which arrives as "kÃ©": a header's bytes are read one character each.
    for (const idempotencyKey of ["", "k\u00c3\u00a9"]) {
      expect(() => validateWithdrawal(body, { session: false, idempotencyKey })).toThrow(
        expect.objectContaining({ details: { fields: { "Idempotency-Key": "must be 1-64 printable ASCII characters (an id of others goes in client_withdrawal_id)" } } }),
      );
    }
  });

  it("reads the amount exactly and the address in lower case, checksummed or already lower case", () => {
    expect(validateWithdrawal(body, { session: false })).toEqual({ amount: 12_500_000n, toAddress: TO.toLowerCase(), clientWithdrawalId: null, password: undefined });
    expect(validateWithdrawal({ ...body, to_address: TO.toLowerCase(), client_withdrawal_id: "w-1" }, { session: false })).toMatchObject({ toAddress: TO.toLowerCase(), clientWithdrawalId: "w-1" });
    const emoji = "\u{1F600}".repeat(64);
    expect(validateWithdrawal({ ...body, client_withdrawal_id: emoji }, { session: false })).toMatchObject({ clientWithdrawalId: emoji });
    expect(validateWithdrawal({ ...body, amount_usdc: 0.000001 }, { session: false }).amount).toBe(1n);
  });

  it.each([
    ["a wrong checksum", { ...body, to_address: TO.replace("aAeb", "aaeb") }, "to_address"],
    ["all upper case", { ...body, to_address: "0x" + TO.slice(2).toUpperCase() }, "to_address"],
    ["too short", { ...body, to_address: TO.slice(0, 41) }, "to_address"],
    ["not hex", { ...body, to_address: "0x" + "g".repeat(40) }, "to_address"],
    ["without 0x", { ...body, to_address: TO.slice(2) }, "to_address"],
    ["the zero address", { ...body, to_address: "0x" + "0".repeat(40) }, "to_address"],
    ["no address", { amount_usdc: 1 }, "to_address"],
    ["no amount", { to_address: TO }, "amount_usdc"],
    ["a zero amount", { ...body, amount_usdc: 0 }, "amount_usdc"],
    ["a negative amount", { ...body, amount_usdc: -1 }, "amount_usdc"],
    ["seven decimals", { ...body, amount_usdc: "1.0000001" }, "amount_usdc"],
    ["an exponent leaving 7 decimals", { ...body, amount_usdc: "1e-7" }, "amount_usdc"],
    ["a client id too long", { ...body, client_withdrawal_id: "x".repeat(65) }, "client_withdrawal_id"],
    ["a client id that is a number", { ...body, client_withdrawal_id: 7 }, "client_withdrawal_id"],
    ["an unknown field", { ...body, memo: "rent" }, "memo"],
    ["a password from a key's request", { ...body, password: "hunter22" }, "password"],
  ])("refuses %s, naming the field", (_name, b, field) => {
    expect(Object.keys(refused(b))).toEqual([field]);
  });

  it("refuses a client_withdrawal_id holding a hidden character, which reads on a screen as another id", () => {
    for (const id of ["w\u200b1", "\u202ew-1", "\ufeffw-1", "w-1\u2060", "w\ufe0f"]) {
      expect(refused({ ...body, client_withdrawal_id: id })).toEqual({ client_withdrawal_id: "must be 1-64 printable characters" });
    }
  });

  it("refuses a client_withdrawal_id holding a space of any kind, which reads as the id with another space", () => {
    for (const id of ["w 1", "w\u00a01", "w\u20091", "w\u202f1", "w\u30001"]) {
      expect([id, refused({ ...body, client_withdrawal_id: id })]).toEqual([id, { client_withdrawal_id: "must be 1-64 printable characters" }]);
    }
  });

  it("asks a session's request for the password, and names every offending field at once", () => {
    expect(refused(body, true)).toEqual({ password: expect.stringContaining("password again") });
    expect(validateWithdrawal({ ...body, password: "correct horse" }, { session: true }).password).toBe("correct horse");
    expect(Object.keys(refused({ amount_usdc: "x", to_address: "y", extra: 1 }))).toEqual(["extra", "amount_usdc", "to_address"]);
    expect(refused([body])).toEqual({ body: "must be a JSON object" });
  });
});
