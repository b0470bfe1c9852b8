export { DEV_CHAIN_ID, startDevChain, type DevChain, type DevChainOptions } from "./devchain.ts";
