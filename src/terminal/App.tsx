import { useCallback, useEffect, useState } from "react";
import { api, onSessionLost, setCsrfToken, type Session } from "./api.ts";
import { Link, navigate, parseRoute, useLocation, type Route } from "./router.tsx";
import { ErrorNote, Loading } from "./components/ui.tsx";
import { AuthPage } from "./pages/Auth.tsx";
import { MarketsPage } from "./pages/Markets.tsx";
import { EventPage } from "./pages/Event.tsx";
import { OrdersPage } from "./pages/Orders.tsx";
import { AccountPage } from "./pages/Account.tsx";
import { ApiKeysPage } from "./pages/ApiKeys.tsx";

type SessionState = { kind: "checking" } | { kind: "out" } | { kind: "in"; session: Session } | { kind: "error"; error: unknown };

export function App() {
  const { path, visit } = useLocation();
  const route = parseRoute(path);
  const [state, setState] = useState<SessionState>({ kind: "checking" });

  const signedIn = useCallback((session: Session) => {
    setCsrfToken(session.csrf_token);
    setState({ kind: "in", session });
  }, []);
  const signedOut = useCallback(() => {
    setCsrfToken(undefined);
    setState({ kind: "out" });
  }, []);

  const check = useCallback(() => {
    setState({ kind: "checking" });
    api<Session>("GET", "/v1/session").then(signedIn, (error: { code?: string }) => (error.code === "not_signed_in" ? signedOut() : setState({ kind: "error", error })));
  }, [signedIn, signedOut]);

  useEffect(() => {
    onSessionLost(signedOut);
    check();
  }, [check, signedOut]);

  const authPage = route.page === "signin" || route.page === "signup";
  useEffect(() => {
    if (state.kind === "out" && !authPage) navigate(`/signin?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
    if (state.kind === "in" && authPage) navigate(safeNext(new URLSearchParams(location.search).get("next")), { replace: true });
  }, [state.kind, authPage]);

  useEffect(() => {
    document.title = `${TITLES[route.page]} · crossfill`;
  }, [route.page]);

  if (state.kind === "checking") return <Loading label="Opening the terminal…" />;
  if (state.kind === "error") {
    return (
      <main className="page narrow">
        <ErrorNote error={state.error} onRetry={check} />
      </main>
    );
  }
  if (state.kind === "out" || authPage) {
    return <AuthPage mode={route.page === "signup" ? "signup" : "signin"} onSignedIn={signedIn} />;
  }

  // A sign-out the server refused (the session signed in again from another tab, whose token this page has
  // not read; the network) leaves the browser signed in: the session is read again, not shown as ended.
  const signOut = () => api("DELETE", "/v1/session").then(signedOut, check);

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/markets" className="brand">
          crossfill
        </Link>
        <nav aria-label="Main">
          <NavLink to="/markets" active={route.page === "markets" || route.page === "event"}>
            Markets
          </NavLink>
          <NavLink to="/orders" active={route.page === "orders"}>
            Orders
          </NavLink>
          <NavLink to="/account" active={route.page === "account"}>
            Account
          </NavLink>
          <NavLink to="/settings/developer/api-keys" active={route.page === "keys"}>
            Settings
          </NavLink>
        </nav>
        <div className="who">
          <span className="email" title={state.session.email}>
            {state.session.email}
          </span>
          <button type="button" className="btn btn-small btn-ghost" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" className="page">
        <Page key={visit} route={route} />
      </main>
    </>
  );
}

/**
 * Only a page of this site, as the browser reads the address: "//host", "https://…", and also "/\host" or
 * "/<tab>/host", which a browser takes for "//host", would send a fresh sign-in elsewhere (history refuses
 * to go there, and the terminal would be left blank).
 */
function safeNext(next: string | null): string {
  let url: URL;
  try {
    url = new URL(next ?? "/markets", location.origin);
  } catch {
    return "/markets";
  }
  const here = url.origin === location.origin && !url.pathname.startsWith("/signin") && !url.pathname.startsWith("/signup");
  return here ? url.pathname + url.search + url.hash : "/markets";
}

const TITLES: Record<Route["page"], string> = {
  signin: "Sign in",
  signup: "Sign up",
  markets: "Markets",
  event: "Event",
  orders: "Orders",
  account: "Account",
  keys: "API keys",
  notfound: "Not found",
};

function NavLink({ to, active, children }: { to: string; active: boolean; children: string }) {
  return (
    <Link to={to} className={active ? "nav active" : "nav"} aria-current={active ? "page" : undefined}>
      {children}
    </Link>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "markets":
      return <MarketsPage />;
    case "event":
      return <EventPage key={route.eventId} eventId={route.eventId} />;
    case "orders":
      return <OrdersPage />;
    case "account":
      return <AccountPage />;
    case "keys":
      return <ApiKeysPage />;
    default:
      return (
        <section className="narrow">
          <h1>Page not found</h1>
          <p>
            There is nothing at this address. <Link to="/markets">Go to the markets</Link>.
          </p>
        </section>
      );
  }
}
