// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
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
/// Sells and redemptions (the section "Sells and redemptions" below) move shares the same way: a sell escrows
/// the client's shares for its order, then burns what sold and credits the proceeds in one transaction, or
/// gives them all back; an escrow has the same deadline as a lock, after which its client may `expireEscrow`
/// it; a redemption burns a resolved position and credits its payout. Proceeds and payouts
/// come from the treasury, which approves the Vault.
/// The operator also pays a client's available USDC out to an address (`withdrawTo`) and credits USDC sent to a
/// client's own address (`creditDeposit`), each exactly once per id, whatever is sent again.
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

    /// Runs each call (an encoded lock, settle or release; escrow, settleSell or releaseEscrow) on its own: one that reverts changes nothing and
    /// the others still happen, so one client's refused lock does not undo the others'. `failures[i]` is the
    /// revert data of call i (its custom error), empty when it succeeded. Each call that succeeded logged its
    /// own Locked, Settled or Released event in this transaction, exactly as when sent alone.
    function batch(bytes[] calldata calls) external onlyOperator returns (bytes[] memory failures) {
        failures = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            bytes calldata call = calls[i];
            bytes4 selector = call.length >= 4 ? bytes4(call[:4]) : bytes4(0);
            if (
                selector != this.lock.selector && selector != this.settle.selector && selector != this.release.selector
                    && selector != this.escrow.selector && selector != this.settleSell.selector
                    && selector != this.releaseEscrow.selector
            ) {
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

    // ---------------------------------------------------------------------------------------------------------
    // Withdrawals and deposits by the operator. A withdrawal id pays a client's available USDC to an address at
    // most once; a deposit key credits USDC sent to a client's own address at most once, pulled from it under
    // the permit the client's key signed. Sending either again can never pay or credit twice.
    // ---------------------------------------------------------------------------------------------------------

    error AlreadyWithdrawn(bytes32 withdrawalId);
    error AlreadyCredited(bytes32 key);
    /// The block the deposit's transfer was mined in is no longer the chain's: a reorganisation replaced it, so this credit
    /// (put back in a node's pool, or sent before the reorganisation was seen) must not pull what the address holds now.
    error TransferBlockReplaced(bytes32 key, uint256 transferBlock);

    /// The operator paid `amount` of the client's available USDC to `to`, for withdrawal `withdrawalId`.
    event WithdrawnTo(bytes32 indexed withdrawalId, address indexed client, address indexed to, uint256 amount);
    /// The operator credited `amount` that was sent to the client's address, pulled from it into the Vault, for the
    /// deposit named by `key` (the service's: a hash of the transfer's transaction hash and log index).
    event DepositCredited(bytes32 indexed key, address indexed client, uint256 amount);

    mapping(bytes32 withdrawalId => bool) public withdrawn;
    mapping(bytes32 key => bool) public credited;

    /// Pays `amount` of the client's available balance to `to`, once per withdrawal id: a second call with the
    /// same id reverts `AlreadyWithdrawn` before anything else, so a retry can never pay twice.
    function withdrawTo(bytes32 withdrawalId, address client, address to, uint256 amount) external onlyOperator {
        if (client == address(0) || to == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (withdrawn[withdrawalId]) revert AlreadyWithdrawn(withdrawalId);
        uint256 avail = _available[client];
        if (amount > avail) revert InsufficientAvailable(client, amount, avail);
        withdrawn[withdrawalId] = true;
        _available[client] = avail - amount;
        emit WithdrawnTo(withdrawalId, client, to, amount);
        usdc.safeTransfer(to, amount);
    }

    /// Credits `amount` to the client's available balance by pulling it from the client's own address, under the
    /// EIP-2612 permit the client's key signed for the Vault (so that address needs no gas), once per key. A permit
    /// someone else submitted first (it is public once sent) has already set the allowance: the pull still works.
    /// Only while the block the transfer was mined in (`transferBlock`, whose hash was `transferBlockHash`) is still the
    /// chain's. A zero hash checks nothing (a transfer deeper than `blockhash` reaches, 256 blocks), nor does a credit
    /// run in the transfer's own height, whose hash no call can read (an `eth_call` at the latest block runs there: the
    /// dry run of a credit of a transfer in the head block).
    function creditDeposit(
        bytes32 key,
        address client,
        uint256 amount,
        uint256 transferBlock,
        bytes32 transferBlockHash,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external onlyOperator {
        if (client == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (credited[key]) revert AlreadyCredited(key);
        if (transferBlockHash != 0 && transferBlock != block.number && blockhash(transferBlock) != transferBlockHash) {
            revert TransferBlockReplaced(key, transferBlock);
        }
        credited[key] = true;
        _available[client] += amount;
        emit DepositCredited(key, client, amount);
        try IERC20Permit(address(usdc)).permit(client, address(this), amount, deadline, v, r, s) {} catch {}
        usdc.safeTransferFrom(client, address(this), amount);
    }

    // ---------------------------------------------------------------------------------------------------------
    // Sells and redemptions. A sell's order id escrows the client's shares once (its own mapping: a sell locks
    // no USDC), and that escrow ends exactly once: settled (the sold shares burned, the proceeds credited and the
    // rest returned, in one transaction) or released (everything returned), by the operator, or expired by its
    // client once its deadline (`lockTtl` after the escrow, as a lock's) has passed. A redemption key burns a resolved
    // position and credits its payout once. A share pays at most 1 USDC (1e6 micro-USDC per 1e6 micro-shares),
    // so no proceeds or payout may exceed the shares burned for it. The Vault holds escrowed shares itself.
    // ---------------------------------------------------------------------------------------------------------

    enum EscrowState {
        None,
        Escrowed,
        Settled,
        Released
    }

    /// Two slots, packed as a lock: client, shares (uint56: 72 billion shares in micro-units), deadline and
    /// state, then the token id.
    struct Escrow {
        address client;
        uint56 shares;
        uint32 deadline;
        EscrowState state;
        uint256 tokenId;
    }

    /// One holder's position to redeem at resolution, under a key that is redeemed at most once.
    struct Redemption {
        bytes32 key;
        address client;
        uint256 tokenId;
        uint256 shares;
        uint256 payout;
    }

    error AlreadyEscrowed(bytes32 orderId);
    error InsufficientShares(address client, uint256 tokenId, uint256 requested, uint256 held);
    error SoldExceedsEscrow(bytes32 orderId, uint256 sold, uint256 escrowed);
    /// `id` is a sell's order id or a redemption key.
    error PaysMoreThanShares(bytes32 id, uint256 amount, uint256 shares);
    error AlreadyRedeemed(bytes32 key);
    /// The Vault itself holds the shares escrowed for every sell: they are never a client's to sell or redeem.
    error NotAClient(address account);
    /// Only the client whose shares an escrow holds may expire it.
    error NotEscrowClient(bytes32 orderId, address caller);

    event Escrowed(bytes32 indexed orderId, address indexed client, uint256 tokenId, uint256 shares);
    /// Each escrow ends with exactly one of SellSettled, EscrowReleased, EscrowExpired.
    event SellSettled(
        bytes32 indexed orderId,
        address indexed client,
        uint256 tokenId,
        uint256 sold,
        uint256 returned,
        uint256 proceeds
    );
    event EscrowReleased(bytes32 indexed orderId, address indexed client, uint256 tokenId, uint256 shares);
    /// An escrow its client ended by `expireEscrow` after its deadline: every share returned.
    event EscrowExpired(bytes32 indexed orderId, address indexed client, uint256 tokenId, uint256 shares);
    event Redeemed(bytes32 indexed key, address indexed client, uint256 tokenId, uint256 shares, uint256 payout);

    mapping(bytes32 orderId => Escrow) private _escrows;
    mapping(bytes32 key => bool) public redeemed;

    /// Takes `shares` of the client's position into escrow for the sell order `orderId`.
    function escrow(bytes32 orderId, address client, uint256 tokenId, uint256 shares) external onlyOperator {
        if (shares == 0) revert ZeroAmount();
        if (client == address(this)) revert NotAClient(client);
        if (_escrows[orderId].state != EscrowState.None) revert AlreadyEscrowed(orderId);
        uint256 held = sot.balanceOf(client, tokenId);
        if (shares > held) revert InsufficientShares(client, tokenId, shares, held);
        uint32 deadline = SafeCast.toUint32(block.timestamp + lockTtl);
        _escrows[orderId] = Escrow(client, SafeCast.toUint56(shares), deadline, EscrowState.Escrowed, tokenId);
        emit Escrowed(orderId, client, tokenId, shares);
        sot.move(client, address(this), tokenId, shares);
    }

    /// Burns `sold` of the escrowed shares, credits `proceeds` (pulled from the treasury) to the client's
    /// available balance and returns the unsold shares, all in one transaction: a sale is never paid without
    /// its burn, nor burned without its proceeds.
    function settleSell(bytes32 orderId, uint256 sold, uint256 proceeds) external onlyOperator {
        Escrow memory e = _openEscrow(orderId);
        if (sold > e.shares) revert SoldExceedsEscrow(orderId, sold, e.shares);
        if (proceeds > sold) revert PaysMoreThanShares(orderId, proceeds, sold);
        uint256 rest = e.shares - sold;
        _escrows[orderId].state = EscrowState.Settled;
        _available[e.client] += proceeds;
        emit SellSettled(orderId, e.client, e.tokenId, sold, rest, proceeds);
        if (proceeds > 0) usdc.safeTransferFrom(treasury, address(this), proceeds);
        if (sold > 0) sot.burn(address(this), e.tokenId, sold);
        if (rest > 0) sot.move(address(this), e.client, e.tokenId, rest);
    }

    /// Returns every escrowed share to the client: the sell sold nothing. The operator may settle or release an
    /// open escrow after its deadline too (a late fill) until its client expires it.
    function releaseEscrow(bytes32 orderId) external onlyOperator {
        Escrow memory e = _openEscrow(orderId);
        emit EscrowReleased(orderId, e.client, e.tokenId, e.shares);
        _returnEscrow(orderId, e);
    }

    /// The client takes back every share of its open escrow once the deadline has passed, whatever the operator does.
    function expireEscrow(bytes32 orderId) external {
        Escrow memory e = _openEscrow(orderId);
        if (msg.sender != e.client) revert NotEscrowClient(orderId, msg.sender);
        if (block.timestamp <= e.deadline) revert NotExpired(orderId, e.deadline);
        emit EscrowExpired(orderId, e.client, e.tokenId, e.shares);
        _returnEscrow(orderId, e);
    }

    /// Redeems resolved positions, each on its own: burns its shares and credits its payout (a winning share
    /// pays 1 USDC, a losing one 0), all payouts pulled from the treasury at once. An item refused (its key
    /// redeemed before, in this call or an earlier one; zero shares; a payout above its shares; the Vault as
    /// client; shares the client does not hold) changes nothing and the others still happen. `failures[i]` is item i's custom
    /// error, empty when it was redeemed; each redeemed item logs its Redeemed event.
    function redeem(Redemption[] calldata items) external onlyOperator returns (bytes[] memory failures) {
        failures = new bytes[](items.length);
        uint256 total = 0;
        for (uint256 i = 0; i < items.length; i++) {
            Redemption calldata r = items[i];
            failures[i] = _redemptionRefused(r);
            if (failures[i].length > 0) continue;
            redeemed[r.key] = true;
            _available[r.client] += r.payout;
            total += r.payout;
            emit Redeemed(r.key, r.client, r.tokenId, r.shares, r.payout);
            sot.burn(r.client, r.tokenId, r.shares);
        }
        if (total > 0) usdc.safeTransferFrom(treasury, address(this), total);
    }

    function escrowOf(bytes32 orderId)
        external
        view
        returns (address client, uint256 tokenId, uint256 shares, uint256 deadline, EscrowState state)
    {
        Escrow memory e = _escrows[orderId];
        return (e.client, e.tokenId, e.shares, e.deadline, e.state);
    }

    /// Gives an open escrow back to its client whole; an escrow ended this way reads as Released.
    function _returnEscrow(bytes32 orderId, Escrow memory e) private {
        _escrows[orderId].state = EscrowState.Released;
        sot.move(address(this), e.client, e.tokenId, e.shares);
    }

    function _openEscrow(bytes32 orderId) private view returns (Escrow memory e) {
        e = _escrows[orderId];
        if (e.state == EscrowState.None) revert UnknownOrder(orderId);
        if (e.state == EscrowState.Settled) revert AlreadySettled(orderId);
        if (e.state == EscrowState.Released) revert AlreadyReleased(orderId);
    }

    /// Why an item of `redeem` cannot be redeemed, as its custom error; empty when it can.
    function _redemptionRefused(Redemption calldata r) private view returns (bytes memory) {
        if (redeemed[r.key]) return abi.encodeWithSelector(AlreadyRedeemed.selector, r.key);
        if (r.shares == 0) return abi.encodeWithSelector(ZeroAmount.selector);
        if (r.payout > r.shares) return abi.encodeWithSelector(PaysMoreThanShares.selector, r.key, r.payout, r.shares);
        if (r.client == address(this)) return abi.encodeWithSelector(NotAClient.selector, r.client);
        uint256 held = sot.balanceOf(r.client, r.tokenId);
        if (r.shares > held) return abi.encodeWithSelector(InsufficientShares.selector, r.client, r.tokenId, r.shares, held);
        return "";
    }
}
