// Console logins (tether-ground --web-users): the session the ground's cookie stands for, the
// login form, and the WebSocket address with the session's CSRF token. A ground without
// logins answers GET /api/session with logins:false (an older one with 404): the console then
// connects to /ws at once, as it always did.
import { el } from "./store";

/** What GET /api/session and POST /api/login answer (fields absent in some answers). */
interface SessionReply {
  logins?: boolean;
  user?: string | null;
  csrf?: string;
  error?: string;
}

type Listener = () => void;

export class Session {
  /** Whether the ground asks for logins (known after the first check). */
  logins = false;
  /** The logged-in person; null when not logged in (or without logins). */
  user: string | null = null;
  private csrf = "";
  private listeners = new Set<Listener>();

  /** True when the ground asks for a login that this page does not have. */
  get needsLogin(): boolean {
    return this.logins && this.user === null;
  }

  onChange(l: Listener): void {
    this.listeners.add(l);
  }

  private set(logins: boolean, user: string | null, csrf: string): void {
    const changed = logins !== this.logins || user !== this.user || csrf !== this.csrf;
    this.logins = logins;
    this.user = user;
    this.csrf = csrf;
    if (changed) for (const l of this.listeners) l();
  }

  /**
   * Asks the ground who this page is. Resolves false when a login is needed (401). An
   * unreachable ground or an answer this page does not understand leaves what was known:
   * the socket's own failure then says the ground is away, and its retries check again.
   */
  async check(): Promise<boolean> {
    let res: Response;
    try {
      res = await fetch("/api/session", { credentials: "same-origin", cache: "no-store" });
    } catch {
      return !this.needsLogin;
    }
    if (res.status === 401) {
      this.set(true, null, "");
      return false;
    }
    if (!res.ok) return !this.needsLogin;
    const r = await readJson(res);
    if (r.logins === true && typeof r.user === "string" && r.user) {
      this.set(true, r.user, typeof r.csrf === "string" ? r.csrf : "");
    } else if (r.logins === false) {
      this.set(false, null, "");
    }
    return !this.needsLogin;
  }

  /** Logs in; resolves with the ground's error text on refusal, null on success. */
  async login(user: string, password: string): Promise<string | null> {
    let res: Response;
    try {
      res = await fetch("/api/login", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ user, password }),
      });
    } catch (e) {
      return `the ground station is not reachable: ${(e as Error).message}`;
    }
    const r = await readJson(res);
    if (!res.ok) return r.error || `login refused (HTTP ${res.status})`;
    if (typeof r.user !== "string" || !r.user) return "the ground's answer to the login names no user";
    this.set(true, r.user, typeof r.csrf === "string" ? r.csrf : "");
    return null;
  }

  /** Logs out; the ground closes this session's sockets. Forgets the session either way. */
  async logout(): Promise<string | null> {
    let error: string | null = null;
    try {
      const res = await fetch("/api/logout", {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRF-Token": this.csrf },
      });
      if (!res.ok) error = (await readJson(res)).error || `logout refused (HTTP ${res.status})`;
    } catch (e) {
      error = `the ground station is not reachable: ${(e as Error).message}`;
    }
    this.set(true, null, "");
    return error;
  }

  /** The WebSocket's address: /ws, with the session's CSRF token when logins are on. */
  /** A WebSocket URL of this ground's at `path` with `params` (and the login's token). */
  socketUrl(path: string, params: Record<string, string> = {}): string {
    const q = new URLSearchParams(params);
    if (this.logins && this.csrf) q.set("csrf", this.csrf);
    const base = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
    const query = q.toString();
    return query ? `${base}?${query}` : base;
  }

  wsUrl(): string {
    const base = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`;
    return this.logins && this.csrf ? `${base}?csrf=${encodeURIComponent(this.csrf)}` : base;
  }
}

async function readJson(res: Response): Promise<SessionReply> {
  try {
    const v: unknown = await res.json();
    return v && typeof v === "object" ? (v as SessionReply) : {};
  } catch {
    return {};
  }
}

/**
 * The login form: over the page below the header (whose STOP stays in sight), shown while
 * the ground asks for a login this page does not have. `onLogin` runs after a login.
 */
export function mountLogin(session: Session, onLogin: () => void): void {
  const user = el("input", { id: "login-user", name: "username", autocomplete: "username", required: "" });
  const password = el("input", {
    id: "login-password", name: "password", type: "password", autocomplete: "current-password", required: "",
  });
  const submit = el("button", { id: "login-submit", type: "submit", text: "log in" });
  const error = el("div", { id: "login-error", class: "bad", role: "alert" });
  const form = el(
    "form",
    { class: "panel login-form" },
    el("h2", { text: "log in to the ground station" }),
    el("label", { text: "user" }, user),
    el("label", { text: "password" }, password),
    submit,
    error,
  );
  const overlay = el("div", { id: "login", class: "login-overlay", hidden: "" }, form);
  document.body.append(overlay);

  const show = () => {
    const was = overlay.hidden;
    overlay.hidden = !session.needsLogin;
    if (was && !overlay.hidden) {
      password.value = "";
      user.focus();
    }
  };
  session.onChange(show);

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    error.textContent = "";
    void session.login(user.value.trim(), password.value).then((err) => {
      submit.disabled = false;
      if (err) {
        error.textContent = err;
        password.select();
        return;
      }
      password.value = "";
      onLogin();
    });
  });
}
