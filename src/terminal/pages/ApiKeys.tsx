import { useState, type FormEvent } from "react";
import { api, noAnswer, type ApiKey, type NewApiKey } from "../api.ts";
import { short, when } from "../format.ts";
import { CopyButton, ErrorNote, Loading, Modal, useAskBeforeLeaving, useAsync } from "../components/ui.tsx";

export function ApiKeysPage() {
  const keys = useAsync(() => api<{ data: ApiKey[] }>("GET", "/v1/keys").then((r) => r.data), []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<NewApiKey>();
  const [revoking, setRevoking] = useState<ApiKey>();

  return (
    <section>
      <nav className="crumbs" aria-label="Breadcrumb">
        <span>Settings</span> <span aria-hidden="true">/</span> <span>Developer</span> <span aria-hidden="true">/</span> <span>API Keys</span>
      </nav>
      <div className="page-head row">
        <div>
          <h1>API Keys</h1>
          <p className="muted">
            Keys let a program use the crossfill API for this account. Reads need the <code>read</code> scope; orders need <code>trade</code> and a request signed with the key's secret.
          </p>
        </div>
        <button type="button" className="btn btn-primary" onClick={() => setCreating(true)}>
          Generate New Key
        </button>
      </div>
      {keys.error !== undefined && <ErrorNote error={keys.error} onRetry={keys.reload} />}
      {keys.data === undefined ? (
        keys.loading && <Loading label="Loading your keys…" />
      ) : keys.data.length === 0 ? (
        <p className="empty">No keys yet. Generate one to use the API from your own code.</p>
      ) : (
        <div className="table-wrap">
          <table className="table keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Key</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.map((k) => (
                <tr key={k.api_key} className={k.revoked_at ? "revoked" : ""} data-testid="key-row">
                  <td data-label="Name">{k.name}</td>
                  <td data-label="Key" className="hash">
                    <code>{k.api_key}</code> <CopyButton text={k.api_key} />
                  </td>
                  <td data-label="Scopes">
                    {k.scopes.join(", ")}
                    {k.withdrawal_allowlist && (
                      <div className="muted allowlist" data-testid="key-allowlist">
                        withdrawals only to {k.withdrawal_allowlist.map((a) => short(a)).join(", ")}
                      </div>
                    )}
                  </td>
                  <td data-label="Created">{when(k.created_at)}</td>
                  <td data-label="Last used">{when(k.last_used_at)}</td>
                  <td data-label="Status" className="r">
                    {k.revoked_at ? (
                      <span className="badge badge-rejected" title={`Revoked ${when(k.revoked_at)}`}>
                        Revoked
                      </span>
                    ) : (
                      <button type="button" className="btn btn-small btn-danger" onClick={() => setRevoking(k)} aria-label={`Revoke key ${k.name}`}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && (
        <NewKeyDialog
          onClose={() => setCreating(false)}
          onUnanswered={keys.reload}
          onCreated={(k) => {
            setCreating(false);
            setCreated(k);
            keys.reload();
          }}
        />
      )}
      {created && <SecretDialog created={created} onClose={() => setCreated(undefined)} />}
      {revoking && (
        <RevokeDialog
          apiKey={revoking}
          onClose={() => setRevoking(undefined)}
          onRevoked={() => {
            setRevoking(undefined);
            keys.reload();
          }}
        />
      )}
    </section>
  );
}

function NewKeyDialog({ onClose, onCreated, onUnanswered }: { onClose: () => void; onCreated: (k: NewApiKey) => void; onUnanswered: () => void }) {
  const [name, setName] = useState("");
  const [trade, setTrade] = useState(true);
  // Never on by default: a key that can withdraw can move the vault's USDC out of crossfill.
  const [withdraw, setWithdraw] = useState(false);
  // The only addresses a withdrawing key may pay to, one a line; none: any address.
  const [allowed, setAllowed] = useState("");
  const allowlist = allowed.split(/\s+/).filter((a) => a !== "");
  // A key that can withdraw pays out without the password, so making one asks for it again, as a withdrawal does.
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  useAskBeforeLeaving(busy);
  const [error, setError] = useState<unknown>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onCreated(
        await api<NewApiKey>("POST", "/v1/keys", {
          name: name.trim(),
          scopes: ["read", ...(trade ? ["trade"] : []), ...(withdraw ? ["withdraw"] : [])],
          ...(withdraw && allowlist.length > 0 ? { withdrawal_allowlist: allowlist } : {}),
          ...(withdraw ? { password } : {}),
        }),
      );
    } catch (err) {
      // Made or not, a key whose answer was lost has a secret no one will see: the list shows whether it was made.
      if (noAnswer(err)) onUnanswered();
      setError(noAnswer(err) ? new Error("The key may have been made, but no answer came back: its secret cannot be shown again. If it is in the list, revoke it.") : err);
      setBusy(false);
      setPassword("");
    }
  };
  return (
    <Modal title="Generate a new API key" onClose={onClose}>
      <form onSubmit={submit}>
        <label className="field">
          Name
          <input name="name" required placeholder="e.g. market-maker bot" value={name} onChange={(e) => setName(e.target.value)} autoFocus />
        </label>
        <fieldset className="field">
          <legend>Scopes</legend>
          <label className="check">
            <input type="checkbox" checked disabled /> read — markets, prices, orders, account
          </label>
          <label className="check">
            <input type="checkbox" name="trade" checked={trade} onChange={(e) => setTrade(e.target.checked)} /> trade — place orders that spend your vault's USDC
          </label>
          <label className="check">
            <input type="checkbox" name="withdraw" checked={withdraw} onChange={(e) => setWithdraw(e.target.checked)} /> withdraw — pay your vault's USDC out
            {allowlist.length > 0 ? ` to ${allowlist.length === 1 ? "one address" : `${allowlist.length} addresses`} only` : " to any address"}
          </label>
        </fieldset>
        {withdraw && (
          <label className="field">
            Withdrawals only to (one address a line; empty: any address)
            <textarea name="withdrawal_allowlist" rows={3} spellCheck={false} placeholder="0x…" value={allowed} onChange={(e) => setAllowed(e.target.value)} />
          </label>
        )}
        {withdraw && (
          <label className="field">
            Your password
            <input type="password" name="key-password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
            <small className="muted">Enter your password again to make a key that can send money out of your vault.</small>
          </label>
        )}
        {error !== undefined && <ErrorNote error={error} />}
        <div className="actions">
          <button type="button" className="btn" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="btn btn-primary" disabled={busy || name.trim() === "" || (withdraw && password === "")}>
            {busy ? "Generating…" : "Generate key"}
          </button>
        </div>
      </form>
    </Modal>
  );
}

function SecretDialog({ created, onClose }: { created: NewApiKey; onClose: () => void }) {
  return (
    <Modal title="Your new API key" onClose={onClose}>
      <p className="note note-warn" role="alert">
        Copy the secret now and keep it somewhere safe. <strong>It will not be shown again</strong>: crossfill stores it encrypted and can never display it. If you lose it, revoke
        this key and generate a new one.
      </p>
      <dl className="secret">
        <dt>API key</dt>
        <dd className="hash">
          <code data-testid="new-api-key">{created.api_key}</code> <CopyButton text={created.api_key} />
        </dd>
        <dt>API secret</dt>
        <dd className="hash">
          <code data-testid="new-api-secret">{created.api_secret}</code> <CopyButton text={created.api_secret} label="Copy secret" />
        </dd>
        <dt>Scopes</dt>
        <dd>{created.scopes.join(", ")}</dd>
      </dl>
      <div className="actions">
        <button type="button" className="btn btn-primary" onClick={onClose} autoFocus>
          I have stored the secret
        </button>
      </div>
    </Modal>
  );
}

function RevokeDialog({ apiKey, onClose, onRevoked }: { apiKey: ApiKey; onClose: () => void; onRevoked: () => void }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const revoke = async () => {
    setBusy(true);
    try {
      await api("DELETE", `/v1/keys/${encodeURIComponent(apiKey.api_key)}`);
      onRevoked();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <Modal title={`Revoke “${apiKey.name}”?`} onClose={onClose}>
      <p>
        Programs using <code>{apiKey.api_key}</code> will be refused from their next request. This cannot be undone.
      </p>
      {error !== undefined && <ErrorNote error={error} />}
      <div className="actions">
        <button type="button" className="btn" onClick={onClose} autoFocus>
          Keep the key
        </button>
        <button type="button" className="btn btn-danger" onClick={revoke} disabled={busy}>
          {busy ? "Revoking…" : "Revoke key"}
        </button>
      </div>
    </Modal>
  );
}
