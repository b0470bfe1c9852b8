// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";

/// @notice Settled outcome tokens (SOT): one ERC-1155 id per (event, outcome),
/// id = uint256(keccak256(abi.encodePacked(eventId, ":", outcome))).
/// The Vault deploys it, so the Vault is the only minter and no setter can ever change that.
contract PositionToken is ERC1155 {
    error OnlyMinter(address caller);

    address public immutable minter;

    constructor(string memory uri_) ERC1155(uri_) {
        minter = msg.sender;
    }

    function tokenIdOf(string calldata eventId, string calldata outcome) external pure returns (uint256) {
        return uint256(keccak256(abi.encodePacked(eventId, ":", outcome)));
    }

    function mint(address to, uint256 id, uint256 amount) external {
        if (msg.sender != minter) revert OnlyMinter(msg.sender);
        _mint(to, id, amount, "");
    }
}
