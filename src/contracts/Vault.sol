// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {PositionToken} from "./PositionToken.sol";

/// @notice Per-client USDC deposits that the router's operator can lock for an order, then settle
/// (pay the venue side from the lock, mint the position) or release. The rules here are the ones
/// the service must never break even with a bug: a lock never exceeds what is available, an order
/// id is locked once and then settled or released once, settle never spends more than was locked,
/// and only the operator moves locked funds. Every lock also has a deadline: once it has passed, anyone
/// may `expire` the lock and give the whole amount back to the client, so no lock the service forgets
/// (a crash, a lost key) holds a client's money for ever. The operator may send many locks, settles and
/// releases in one transaction (`batch`), each done or refused on its own.
contract Vault {
    using SafeERC20 for IERC20;

    enum LockState {
        None,
        Locked,
        Settled,
        Released
    }

    /// Packed in one slot (160 + 56 + 32 + 8 bits): an order's lock is read and written once per settle.
    /// uint56 holds 72 billion USDC in micro-units; uint32 seconds last until 2106.
    struct Lock {
        address client;
        uint56 amount;
        uint32 deadline;
        LockState state;
    }

    error OnlyOperator(address caller);
    error ZeroAmount();
    error ZeroAddress();
    error ZeroTtl();
    error InsufficientAvailable(address client, uint256 requested, uint256 available);
    error AlreadyLocked(bytes32 orderId);
    error UnknownOrder(bytes32 orderId);
    error AlreadySettled(bytes32 orderId);
    error AlreadyReleased(bytes32 orderId);
    error SpendExceedsLock(bytes32 orderId, uint256 spent, uint256 locked);
    error NotExpired(bytes32 orderId, uint256 deadline);
    error NotBatchable(bytes4 selector);
    error CallFailed();

    event Deposited(address indexed client, address indexed from, uint256 amount);
    event Withdrawn(address indexed client, uint256 amount);
    event Locked(bytes32 indexed orderId, address indexed client, uint256 amount);
    event Settled(
        bytes32 indexed orderId,
        address indexed client,
        uint256 spent,
        uint256 released,
        uint256 tokenId,
        uint256 shares
    );
    event Released(bytes32 indexed orderId, address indexed client, uint256 amount);
    /// A lock released by `expire` after its deadline. Each lock ends with exactly one of Settled, Released, Expired.
    event Expired(bytes32 indexed orderId, address indexed client, uint256 amount);

    IERC20 public immutable usdc;
    PositionToken public immutable sot;
    address public immutable operator;
    /// Receives what settle spends: the operator pays the venues off-chain from it.
    address public immutable treasury;
    /// Seconds from a lock to its deadline. Long enough for any settle the service will ever make.
    uint32 public immutable lockTtl;

    /// Gas one call of a batch may use at most: several times what a settle minting to a new holder takes,
    /// and a bound on what a client's ERC-1155 receiver can burn, so it cannot starve the rest of the batch.
    uint256 private constant BATCH_CALL_GAS = 400_000;

    mapping(address client => uint256) private _available;
    mapping(address client => uint256) private _locked;
    mapping(bytes32 orderId => Lock) private _locks;

    /// The Vault itself calls lock, settle and release only from `batch`, which only the operator may call.
    modifier onlyOperator() {
        if (msg.sender != operator && msg.sender != address(this)) revert OnlyOperator(msg.sender);
        _;
    }

    constructor(IERC20 usdc_, address operator_, address treasury_, uint32 lockTtl_, string memory sotUri) {
        if (address(usdc_) == address(0) || operator_ == address(0) || treasury_ == address(0)) revert ZeroAddress();
        if (lockTtl_ == 0) revert ZeroTtl();
        usdc = usdc_;
        operator = operator_;
        treasury = treasury_;
        lockTtl = lockTtl_;
        sot = new PositionToken(sotUri);
    }

    function deposit(uint256 amount) external {
        _deposit(msg.sender, amount);
    }

    /// Anyone may fund a client's balance (the faucet, an on-ramp); the tokens come from the caller.
    function depositFor(address client, uint256 amount) external {
        if (client == address(0)) revert ZeroAddress();
        _deposit(client, amount);
    }

    function withdraw(uint256 amount) external {
        if (amount == 0) revert ZeroAmount();
        uint256 avail = _available[msg.sender];
        if (amount > avail) revert InsufficientAvailable(msg.sender, amount, avail);
        _available[msg.sender] = avail - amount;
        emit Withdrawn(msg.sender, amount);
        usdc.safeTransfer(msg.sender, amount);
    }

    function lock(bytes32 orderId, address client, uint256 amount) external onlyOperator {
        if (amount == 0) revert ZeroAmount();
        if (_locks[orderId].state != LockState.None) revert AlreadyLocked(orderId);
        uint256 avail = _available[client];
        if (amount > avail) revert InsufficientAvailable(client, amount, avail);
        _available[client] = avail - amount;
        _locked[client] += amount;
        uint32 deadline = SafeCast.toUint32(block.timestamp + lockTtl);
        _locks[orderId] = Lock(client, SafeCast.toUint56(amount), deadline, LockState.Locked);
        emit Locked(orderId, client, amount);
    }

    /// Spends `spent` of the lock to the treasury, gives the rest back to the client and mints the
    /// filled position, all in one transaction so a fill is never paid without its position.
    function settle(bytes32 orderId, uint256 spent, uint256 tokenId, uint256 shares) external onlyOperator {
        Lock memory l = _openLock(orderId);
        if (spent > l.amount) revert SpendExceedsLock(orderId, spent, l.amount);
        uint256 rest = l.amount - spent;
        _locks[orderId].state = LockState.Settled;
        _locked[l.client] -= l.amount;
        _available[l.client] += rest;
        emit Settled(orderId, l.client, spent, rest, tokenId, shares);
        if (spent > 0) usdc.safeTransfer(treasury, spent);
        if (shares > 0) sot.mint(l.client, tokenId, shares);
    }

    /// The operator may settle or release an open lock after its deadline too (a late fill) until someone expires it.
    function release(bytes32 orderId) external onlyOperator {
        Lock memory l = _openLock(orderId);
        _unlock(orderId, l);
        emit Released(orderId, l.client, l.amount);
    }

    /// Runs each call (an encoded lock, settle or release) on its own: one that reverts changes nothing and
    /// the others still happen, so one client's refused lock does not undo the others'. `failures[i]` is the
    /// revert data of call i (its custom error), empty when it succeeded. Each call that succeeded logged its
    /// own Locked, Settled or Released event in this transaction, exactly as when sent alone.
    function batch(bytes[] calldata calls) external onlyOperator returns (bytes[] memory failures) {
        failures = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            bytes calldata call = calls[i];
            bytes4 selector = call.length >= 4 ? bytes4(call[:4]) : bytes4(0);
            if (selector != this.lock.selector && selector != this.settle.selector && selector != this.release.selector) {
                failures[i] = abi.encodeWithSelector(NotBatchable.selector, selector);
                continue;
            }
            (bool ok, bytes memory reason) = address(this).call{gas: BATCH_CALL_GAS}(call);
            if (!ok) failures[i] = reason.length > 0 ? reason : abi.encodeWithSelector(CallFailed.selector);
        }
    }

    /// Anyone may end a lock whose deadline has passed: the whole amount goes back to the client.
    function expire(bytes32 orderId) external {
        Lock memory l = _openLock(orderId);
        if (block.timestamp <= l.deadline) revert NotExpired(orderId, l.deadline);
        _unlock(orderId, l);
        emit Expired(orderId, l.client, l.amount);
    }

    function available(address client) external view returns (uint256) {
        return _available[client];
    }

    function locked(address client) external view returns (uint256) {
        return _locked[client];
    }

    function lockOf(bytes32 orderId)
        external
        view
        returns (address client, uint256 amount, uint256 deadline, LockState state)
    {
        Lock memory l = _locks[orderId];
        return (l.client, l.amount, l.deadline, l.state);
    }

    function _deposit(address client, uint256 amount) private {
        if (amount == 0) revert ZeroAmount();
        _available[client] += amount;
        emit Deposited(client, msg.sender, amount);
        usdc.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// Gives an open lock back to its client whole; a lock ended this way reads as Released.
    function _unlock(bytes32 orderId, Lock memory l) private {
        _locks[orderId].state = LockState.Released;
        _locked[l.client] -= l.amount;
        _available[l.client] += l.amount;
    }

    function _openLock(bytes32 orderId) private view returns (Lock memory l) {
        l = _locks[orderId];
        if (l.state == LockState.None) revert UnknownOrder(orderId);
        if (l.state == LockState.Settled) revert AlreadySettled(orderId);
        if (l.state == LockState.Released) revert AlreadyReleased(orderId);
    }
}
