import { useState, type FormEvent } from "react";
import { api, ApiError, clientIdFor, forgetClientId, noAnswer, type Withdrawal } from "../api.ts";
import { decimal, usdc, when } from "../format.ts";
import { CopyButton, ErrorNote, Modal, StatusBadge, useAskBeforeLeaving, useOnScreen } from "./ui.tsx";

const AMOUNT = /^\d{1,9}(\.\d{1,6})?$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Pays available USDC to an external address. The amount and address first; then the password again,
 * which the server checks before paying (a session alone, left open on a shared screen, moves no money out).
 */
export function WithdrawDialog({ available, onClose, onDone }: { available: number; onClose: () => void; onDone: () => void }) {
  const [amount, setAmount] = useState("");
  const [address, setAddress] = useState("");
  const [password, setPassword] = useState("");
  const [step, setStep] = useState<"details" | "password">("details");
  const [sending, setSending] = useState(false);
  const [result, setResult] = useState<{ withdrawal?: Withdrawal; error?: unknown; again?: boolean }>();
  const onScreen = useOnScreen();
  useAskBeforeLeaving(sending);
  const amountOk = AMOUNT.test(amount) && Number(amount) > 0;
  const addressOk = ADDRESS.test(address);

  const next = (e: FormEvent) => {
    e.preventDefault();
    if (amountOk && addressOk) setStep("password");
  };

  const send = async (e: FormEvent) => {
    e.preventDefault();
    setSending(true);
    setResult(undefined);
    // The address as the server keeps it (in lower case); sent as typed, for the server to check a checksummed one.
    const request = `POST /v1/withdrawals ${JSON.stringify({ amount_usdc: decimal(amount), to_address: address.toLowerCase() })}`;
    const { clientId, again } = clientIdFor(request);
    try {
      const withdrawal = await api<Withdrawal>("POST", "/v1/withdrawals", { amount_usdc: decimal(amount), to_address: address, password, client_withdrawal_id: clientId });
      if (onScreen.current) forgetClientId(request);
      setResult({ withdrawal, again });
      onDone();
    } catch (error) {
      const withdrawal = error instanceof ApiError ? (error.details?.withdrawal as Withdrawal | undefined) : undefined;
      const lost = withdrawal === undefined && noAnswer(error);
      // Another refusal (a wrong password, too many tries) paid nothing: the id is kept only if a confirmation before may have.
      if ((withdrawal !== undefined || !(lost || again)) && onScreen.current) forgetClientId(request);
      setResult({ withdrawal, error: lost ? new Error("The withdrawal may have been sent: no answer came back. Confirm it again as it is: it is paid once.") : error });
    } finally {
      setSending(false);
      setPassword("");
    }
  };

  const w = result?.withdrawal;
  return (
    <Modal title="Withdraw USDC" onClose={onClose}>
      {w && result?.error === undefined ? (
        <section className="result result-good" data-testid="withdrawal-result" aria-live="assertive">
          <h3>{w.status === "confirmed" ? "Withdrawal paid" : "Withdrawal on its way"}</h3>
          <dl className="totals">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={w.status} />
            </dd>
            <dt>Amount</dt>
            <dd className="mono">{usdc(w.amount_usdc)}</dd>
            <dt>To</dt>
            <dd className="mono">{w.to_address}</dd>
            {w.tx_hash && (
              <>
                <dt>Transaction</dt>
                <dd className="hash">
                  <code data-testid="withdrawal-tx">{w.tx_hash}</code> <CopyButton text={w.tx_hash} />
                </dd>
              </>
            )}
          </dl>
          {result.again && (
            <p className="note">
              This withdrawal was confirmed before, its answer not seen then: it was paid once, at {when(w.created_at)}, and not again now. Withdraw again to pay another.
            </p>
          )}
          <button type="button" className="btn" onClick={onClose}>
            Done
          </button>
        </section>
      ) : step === "details" ? (
        <form onSubmit={next}>
          <label className="field">
            Amount (USDC)
            <input inputMode="decimal" name="withdraw-amount" value={amount} onChange={(e) => setAmount(e.target.value.trim())} aria-invalid={amount !== "" && !amountOk} autoFocus />
            <small className={amount === "" || amountOk ? "muted" : "field-error"}>
              {amount === "" || amountOk ? `Available: ${usdc(available)}` : "Enter an amount above 0 with at most 6 decimals."}
            </small>
          </label>
          <label className="field">
            To address
            <input name="withdraw-address" value={address} onChange={(e) => setAddress(e.target.value.trim())} aria-invalid={address !== "" && !addressOk} placeholder="0x…" spellCheck={false} />
            <small className={address === "" || addressOk ? "muted" : "field-error"}>
              {address === "" || addressOk ? "An address on the vault's chain: checksummed, or all lower case." : "Enter a 0x address of 40 hexadecimal digits."}
            </small>
          </label>
          <div className="actions">
            <button type="button" className="btn" onClick={onClose}>
              Cancel
            </button>
            <button type="submit" className="btn btn-primary" disabled={!amountOk || !addressOk}>
              Continue
            </button>
          </div>
        </form>
      ) : (
        <form onSubmit={send}>
          <p>
            Pay <strong className="mono">{usdc(Number(amount))}</strong> to <code>{address}</code>.
          </p>
          <label className="field">
            Your password
            <input type="password" name="withdraw-password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} autoFocus />
            <small className="muted">Enter your password again to send money out of your vault.</small>
          </label>
          {result?.error !== undefined && <ErrorNote error={result.error} />}
          <div className="actions">
            <button type="button" className="btn" onClick={() => setStep("details")} disabled={sending}>
              Back
            </button>
            <button type="submit" className="btn btn-primary" disabled={password === "" || sending}>
              {sending ? "Sending…" : "Confirm withdrawal"}
            </button>
          </div>
        </form>
      )}
    </Modal>
  );
}
