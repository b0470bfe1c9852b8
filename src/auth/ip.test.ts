import { describe, expect, it } from "vitest";
import { addressNetwork } from "./ip.ts";

describe("addressNetwork", () => {
  it("keeps an IPv4 address, also when mapped into IPv6", () => {
    expect(addressNetwork("203.0.113.7")).toBe("203.0.113.7");
    expect(addressNetwork("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressNetwork("::FFFF:203.0.113.7")).toBe("203.0.113.7");
  });

  it("counts an IPv6 address by its /64, however it is spelt", () => {
    const net = addressNetwork("2001:db8:1:2::1");
    expect(net).toBe("2001:db8:1:2::/64");
    for (const same of ["2001:0db8:0001:0002:ffff:ffff:ffff:ffff", "2001:DB8:1:2:0:0:0:9", "2001:db8:1:2::abcd%eth0", "2001:db8:1:2::1.2.3.4"]) {
      expect(addressNetwork(same), same).toBe(net);
    }
    expect(addressNetwork("2001:db8:1:3::1")).not.toBe(net);
    expect(addressNetwork("::1")).toBe("0:0:0:0::/64");
    expect(addressNetwork("2001:db8::")).toBe("2001:db8:0:0::/64");
  });
});
