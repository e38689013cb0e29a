// The one WebSocket to the ground station: requests with ids and promised replies, typed
// message fan-out, and reconnection with exponential backoff (0.25 s doubling to 5 s) so a
// restarted ground is picked up without a page reload. Each (re)connection first asks
// `target` for the address: with logins on, that checks the session, and null (a login is
// needed) holds the connection closed until start() is called again after a login.
import { RequestError, type ReplyMsg, type ServerMsg } from "./protocol";

export type ConnState = "connecting" | "open" | "closed";

type Handler<T> = (msg: T) => void;
type ByType = { [K in ServerMsg["type"]]: Extract<ServerMsg, { type: K }> };

interface Pending {
  resolve: (r: ReplyMsg) => void;
  reject: (e: Error) => void;
  timer: number;
}

const REQUEST_TIMEOUT_MS = 10_000;

export class Connection {
  private ws: WebSocket | null = null;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private handlers = new Map<string, Set<Handler<never>>>();
  private stateHandlers = new Set<(s: ConnState, detail: string) => void>();
  private backoffMs = 250;
  private retryTimer = 0;
  /** Bumped by start() and close(): an open() begun before is abandoned. */
  private generation = 0;
  state: ConnState = "closed";

  constructor(private readonly target: () => Promise<string | null>) {}

  /** Connects (again, after close() or a login), unless a socket is already open. */
  start(): void {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) return;
    window.clearTimeout(this.retryTimer);
    this.drop();
    this.generation++;
    void this.open();
  }

  on<K extends keyof ByType>(type: K, h: Handler<ByType[K]>): void {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, (set = new Set()));
    set.add(h as Handler<never>);
  }

  onState(h: (s: ConnState, detail: string) => void): void {
    this.stateHandlers.add(h);
  }

  /** Sends a message without an id and without waiting (gamepad, heartbeat, visibility). */
  send(msg: Record<string, unknown>): boolean {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /** Sends a request; resolves with the reply, rejects with RequestError when ok is false. */
  request(msg: Record<string, unknown>): Promise<ReplyMsg> {
    const id = this.nextId++;
    return new Promise<ReplyMsg>((resolve, reject) => {
      if (!this.send({ ...msg, id })) {
        reject(new RequestError("not connected to the ground station", [], null));
        return;
      }
      const timer = window.setTimeout(() => {
        this.pending.delete(id);
        reject(new RequestError(`no reply to ${String(msg.type)} within 10 s`, [], null));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (r) => {
          if (r.ok) resolve(r);
          else reject(new RequestError(r.error ?? `${String(msg.type)} refused`, r.errors ?? [], r));
        },
        reject,
        timer,
      });
    });
  }

  private setState(s: ConnState, detail: string): void {
    this.state = s;
    for (const h of this.stateHandlers) h(s, detail);
  }

  private async open(): Promise<void> {
    const generation = this.generation;
    this.setState("connecting", "");
    let url: string | null;
    try {
      url = await this.target();
    } catch (e) {
      url = null;
      console.error("tether: no address to connect to:", e);
    }
    if (generation !== this.generation) return;
    if (url === null) {
      this.setState("closed", "log in to connect");
      return;
    }
    this.setState("connecting", url);
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      this.backoffMs = 250;
      this.setState("open", url);
    };
    ws.onmessage = (ev: MessageEvent) => {
      if (typeof ev.data !== "string") return;
      let msg: ServerMsg;
      try {
        msg = JSON.parse(ev.data) as ServerMsg;
      } catch {
        console.warn("tether: unparsable message", ev.data);
        return;
      }
      if (msg.type === "reply") {
        const p = this.pending.get(msg.id);
        if (p) {
          this.pending.delete(msg.id);
          window.clearTimeout(p.timer);
          p.resolve(msg);
        }
      }
      const set = this.handlers.get(msg.type);
      if (set) for (const h of set) (h as Handler<ServerMsg>)(msg);
    };
    ws.onclose = (ev: CloseEvent) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.failPending();
      const wait = this.backoffMs;
      this.backoffMs = Math.min(this.backoffMs * 2, 5000);
      this.setState("closed", `closed (${ev.code}); retrying in ${(wait / 1000).toFixed(2)} s`);
      this.retryTimer = window.setTimeout(() => void this.open(), wait);
    };
  }

  /** Requests in flight will never get their reply on a new socket. */
  private failPending(): void {
    for (const [id, p] of this.pending) {
      window.clearTimeout(p.timer);
      p.reject(new RequestError("connection to the ground station closed", [], null));
      this.pending.delete(id);
    }
  }

  /** Forgets the socket without a reconnection (its close event is then ignored). */
  private drop(): void {
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      ws.close();
      this.failPending();
    }
  }

  /** Closes with no reconnection until start() (page unload, logout). */
  close(): void {
    window.clearTimeout(this.retryTimer);
    this.generation++;
    this.drop();
    this.setState("closed", "closed");
  }
}
