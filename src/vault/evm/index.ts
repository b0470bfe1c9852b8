export { openEvmVault, type EvmVaultOptions } from "./evm-vault.ts";
export { contractsFromEnv, type ContractOverrides, type Contracts } from "./deployment.ts";
export type { Submit, SubmitResult } from "./sender.ts";
