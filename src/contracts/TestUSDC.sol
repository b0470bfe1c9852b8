// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @notice A 6-decimal stand-in for USDC. Deployed on the embedded dev chain only: a real chain uses real USDC.
contract TestUSDC is ERC20, Ownable {
    constructor(address owner_) ERC20("Test USD Coin", "USDC") Ownable(owner_) {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }
}
