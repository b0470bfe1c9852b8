// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
import {ERC1155Supply} from "@openzeppelin/contracts/token/ERC1155/extensions/ERC1155Supply.sol";

/// @notice Settled outcome tokens (SOT): one ERC-1155 id per (event, outcome),
/// id = uint256(keccak256(abi.encodePacked(eventId, ":", outcome))).
/// The Vault deploys it, so the Vault is the only minter and no setter can ever change that. The Vault alone
/// also burns shares (sold, or redeemed at resolution) and moves a client's shares into and out of a sell's
/// escrow. `totalSupply(id)` is every share minted less every share burned.
contract PositionToken is ERC1155Supply {
    error OnlyMinter(address caller);

    address public immutable minter;

    modifier onlyMinter() {
        if (msg.sender != minter) revert OnlyMinter(msg.sender);
        _;
    }

    constructor(string memory uri_) ERC1155(uri_) {
        minter = msg.sender;
    }

    function tokenIdOf(string calldata eventId, string calldata outcome) external pure returns (uint256) {
        return uint256(keccak256(abi.encodePacked(eventId, ":", outcome)));
    }

    function mint(address to, uint256 id, uint256 amount) external onlyMinter {
        _mint(to, id, amount, "");
    }

    function burn(address from, uint256 id, uint256 amount) external onlyMinter {
        _burn(from, id, amount);
    }

    /// Moves shares between two holders without the receiver hook: the Vault takes a client's shares into a
    /// sell's escrow (it holds them itself) and gives back what was not sold, whoever the client is.
    function move(address from, address to, uint256 id, uint256 amount) external onlyMinter {
        if (from == address(0)) revert ERC1155InvalidSender(address(0));
        if (to == address(0)) revert ERC1155InvalidReceiver(address(0));
        uint256[] memory ids = new uint256[](1);
        uint256[] memory amounts = new uint256[](1);
        ids[0] = id;
        amounts[0] = amount;
        _update(from, to, ids, amounts);
    }
}
