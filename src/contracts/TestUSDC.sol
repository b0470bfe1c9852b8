// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

interface IDepositFor {
    function depositFor(address client, uint256 amount) external;
}

/// @notice A 6-decimal stand-in for USDC. Deployed on the embedded dev chain only: a real chain uses real USDC.
/// Tokens come into being only through `drip`, the dev faucet: mint and deposit into a client's vault balance in
/// one transaction, at most once per key. A crash can then neither leave minted tokens undeposited nor fund an
/// account twice. The one other mint is the treasury's grant at deployment (what pays sells' proceeds and
/// redemptions on the dev chain, where no venue pays the treasury), so the total supply is always the sum
/// of the Dripped events and `treasuryGrant`. It takes EIP-2612 permits, as real USDC does: the Vault credits a
/// deposit by a permit its client's key signed, so the client's address needs no gas.
contract TestUSDC is ERC20, ERC20Permit, Ownable {
    error AlreadyDripped(bytes32 key);

    event Dripped(bytes32 indexed key, address indexed client, uint256 amount);

    mapping(bytes32 key => bool) public dripped;
    uint256 public immutable treasuryGrant;

    constructor(address owner_, address treasury, uint256 grant) ERC20("Test USD Coin", "USDC") ERC20Permit("Test USD Coin") Ownable(owner_) {
        treasuryGrant = grant;
        _mint(treasury, grant);
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function drip(bytes32 key, IDepositFor vault, address client, uint256 amount) external onlyOwner {
        if (dripped[key]) revert AlreadyDripped(key);
        dripped[key] = true;
        _mint(address(this), amount);
        _approve(address(this), address(vault), amount);
        vault.depositFor(client, amount);
        emit Dripped(key, client, amount);
    }
}
