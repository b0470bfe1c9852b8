export { startPolymarketSim, simCredentials, type PolymarketSim, type PolymarketSimOptions } from "./server.ts";
export type { PolymarketSimFaults, PolymarketSimFaultSwitches } from "./faults.ts";
