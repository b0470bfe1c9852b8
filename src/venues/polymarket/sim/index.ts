export { startPolymarketSim, simCredentials, type PolymarketSim, type PolymarketSimOptions } from "./server.ts";
