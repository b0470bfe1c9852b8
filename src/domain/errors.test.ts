import { describe, expect, it } from "vitest";
import { AppError } from "./errors.ts";

describe("the error catalog", () => {
  it("says of order_interrupted only what is true of every order ended with it: a buy or a sell, never routed or never settled, its hold given back or never taken, the server stopped or not", () => {
    expect(new AppError("order_interrupted")).toMatchObject({
      status: 503,
      message: "The order ended before it was settled: nothing was charged or sold, and any USDC locked or shares escrowed for it were given back.",
    });
  });
});
