import { useState, type FormEvent } from "react";
import { api, type Session } from "../api.ts";
import { Link } from "../router.tsx";
import { ErrorNote } from "../components/ui.tsx";

export function AuthPage({ mode, onSignedIn }: { mode: "signin" | "signup"; onSignedIn: (s: Session) => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const signup = mode === "signup";
  const mismatch = signup && confirm !== "" && confirm !== password;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (signup && password !== confirm) {
      setError(new Error("The two passwords differ."));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await api<Session>("POST", signup ? "/v1/session/signup" : "/v1/session/signin", { email, password }));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <main className="auth">
      <div className="auth-card">
        <div className="brand brand-large">crossfill</div>
        <p className="muted">One order book across prediction-market venues.</p>
        <h1>{signup ? "Create your account" : "Sign in"}</h1>
        <form onSubmit={submit} noValidate={false}>
          <label>
            Email
            <input type="email" name="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
          </label>
          <label>
            Password
            <input
              type="password"
              name="password"
              autoComplete={signup ? "new-password" : "current-password"}
              required
              minLength={8}
              maxLength={256}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              aria-describedby={signup ? "password-hint" : undefined}
            />
          </label>
          {signup && (
            <>
              <small id="password-hint" className="muted">
                At least 8 characters.
              </small>
              <label>
                Repeat the password
                <input
                  type="password"
                  name="confirm"
                  autoComplete="new-password"
                  required
                  value={confirm}
                  onChange={(e) => setConfirm(e.target.value)}
                  aria-invalid={mismatch}
                />
              </label>
              {mismatch && <small className="field-error">The two passwords differ.</small>}
            </>
          )}
          {error !== undefined && <ErrorNote error={error} />}
          <button type="submit" className="btn btn-primary btn-block" disabled={busy}>
            {busy ? (signup ? "Creating the account…" : "Signing in…") : signup ? "Create account" : "Sign in"}
          </button>
        </form>
        <p className="switch">
          {signup ? (
            <>
              Already have an account? <Link to="/signin">Sign in</Link>
            </>
          ) : (
            <>
              New to crossfill? <Link to="/signup">Create an account</Link>
            </>
          )}
        </p>
      </div>
    </main>
  );
}
