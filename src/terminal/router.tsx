import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from "react";

/** The terminal's few client routes; the server answers index.html for each of them. */
export type Route =
  | { page: "signin" }
  | { page: "signup" }
  | { page: "markets" }
  | { page: "event"; eventId: string }
  | { page: "orders" }
  | { page: "account" }
  | { page: "keys" }
  | { page: "notfound" };

export function parseRoute(pathname: string): Route {
  const parts = pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const [a, b, c] = parts;
  if (parts.length === 0 || (a === "markets" && parts.length === 1)) return { page: "markets" };
  if (a === "signin" && !b) return { page: "signin" };
  if (a === "signup" && !b) return { page: "signup" };
  if (a === "events" && b && !c) return { page: "event", eventId: b };
  if (a === "orders" && !b) return { page: "orders" };
  if (a === "account" && !b) return { page: "account" };
  if (a === "settings" && (!b || (b === "developer" && (!c || c === "api-keys")))) return { page: "keys" };
  return { page: "notfound" };
}

const listeners = new Set<() => void>();

/** Goes to `to`; to the page already shown too, which then opens anew (a nav link to it reads it again). */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to !== location.pathname + location.search) {
    if (opts.replace) history.replaceState(null, "", to);
    else history.pushState(null, "", to);
  }
  window.scrollTo(0, 0);
  for (const l of listeners) l();
}

/** The path shown, and the visit: a count of the navigations, for the page to be opened anew at each. */
export function useLocation(): { path: string; visit: number } {
  const [here, setHere] = useState({ path: location.pathname, visit: 0 });
  useEffect(() => {
    const update = () => setHere((h) => ({ path: location.pathname, visit: h.visit + 1 }));
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return here;
}

/** A real link (middle-click and "open in new tab" work) that navigates in place on a plain click. */
export function Link({ to, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  const click = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={to} onClick={click} {...rest} />;
}
