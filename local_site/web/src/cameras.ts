// The cameras panel: the active site's cameras (its scene's), one watched at a time. A view
// is a WebSocket of its own (/video?site=…&camera=…, never the console's control socket)
// carrying the camera's description as text, then its VP9 frames as binary messages, which
// the browser decodes with WebCodecs and draws. Under the picture: the frame rate, the age
// of the frame on screen (its capture time, put on the ground's clock by the link's
// estimate, against now) and what was lost.
import { el, stats, type Store } from "./store";
import type { Session } from "./session";
import { ageShort } from "./readout_values";

/** What the browser tests read of the video (window.__tetherStats.video). */
export interface VideoStats {
  camera: string;
  /** Binary frames received, decoded and drawn. */
  received: number;
  decoded: number;
  drawn: number;
  decodeErrors: number;
  /** Capture-to-drawn ages [ms] of the last 300 frames drawn whose capture time is known. */
  ages: number[];
  /** Frames per second drawn, over the last second. */
  fps: number;
  /** The ground's counts, from its last camera_stats message. */
  ground: Record<string, unknown> | null;
  /** The decoder's state and the last thing that went wrong. */
  decoderState: () => string;
  lastError: string;
}

/** The binary frame's header (local_site/web/PROTOCOL.md, /video). */
const HEADER_BYTES = 24;

export function mountCameras(root: HTMLElement, store: Store, session: Session): void {
  const video: VideoStats = {
    camera: "", received: 0, decoded: 0, drawn: 0, decodeErrors: 0, ages: [], fps: 0, ground: null,
    decoderState: () => (decoder ? `${decoder.state}, ${decoder.decodeQueueSize} queued` : "none"),
    lastError: "",
  };
  (stats as typeof stats & { video: VideoStats }).video = video;
  const select = el("select", { id: "camera-choice", title: "the camera to watch" });
  const watchBtn = el("button", { id: "camera-watch", text: "watch" });
  const canvas = el("canvas", { id: "camera-canvas", width: "640", height: "480" });
  canvas.style.width = "100%";
  canvas.style.display = "none";
  const status = el("div", { class: "dim", id: "camera-status", text: "" });
  root.append(el("h2", { text: "cameras" }), el("div", {}, select, " ", watchBtn), canvas, status);
  const g = canvas.getContext("2d");

  let socket: WebSocket | null = null;
  let decoder: VideoDecoder | null = null;
  let waitingForKey = true;
  const captureOf = new Map<number, number>(); // chunk timestamp → capture [ms since epoch]
  let drawnAt: number[] = [];
  let lastCapture = 0;
  let ended = "";

  const cameras = () => store.sites.get(store.activeSite)?.scene?.cameras ?? [];
  const refresh = () => {
    const names = cameras().map((c) => c.name);
    const current = [...select.options].map((o) => o.value);
    if (names.join() !== current.join()) {
      select.replaceChildren(...names.map((n) => el("option", { value: n, text: n })));
    }
    watchBtn.disabled = names.length === 0 && !socket;
    if (!socket) status.textContent = names.length === 0 ? "the site reports no cameras" : ended;
  };
  store.on("site", refresh);
  store.on("active", () => {
    stop("");
    refresh();
  });

  function stop(why: string): void {
    socket?.close();
    socket = null;
    try {
      decoder?.close();
    } catch {
      // already closed by an error
    }
    decoder = null;
    watchBtn.textContent = "watch";
    ended = why;
    if (why) status.textContent = why;
  }

  function start(camera: string): void {
    if (!("VideoDecoder" in window)) {
      status.textContent = "this browser has no WebCodecs (VideoDecoder): no video here";
      return;
    }
    stop("");
    ended = "";
    video.camera = camera;
    video.ages = [];
    waitingForKey = true;
    captureOf.clear();
    const ws = new WebSocket(session.socketUrl("/video", { site: store.activeSite, camera }));
    ws.binaryType = "arraybuffer";
    socket = ws;
    watchBtn.textContent = "stop";
    canvas.style.display = "";
    status.textContent = `opening ${camera}…`;
    ws.onmessage = (e: MessageEvent) => {
      if (ws !== socket) return;
      if (typeof e.data === "string") return onText(JSON.parse(e.data) as Record<string, unknown>);
      onFrame(e.data as ArrayBuffer);
    };
    ws.onclose = () => {
      if (ws === socket) stop(ended || "the view closed");
    };
  }

  function onText(m: Record<string, unknown>): void {
    if (m.type === "camera") {
      canvas.width = Number(m.width) || 640;
      canvas.height = Number(m.height) || 480;
      decoder = new VideoDecoder({
        output: (frame) => {
          video.decoded++;
          g?.drawImage(frame, 0, 0, canvas.width, canvas.height);
          const capture = captureOf.get(frame.timestamp) ?? 0;
          captureOf.delete(frame.timestamp);
          frame.close();
          const now = Date.now();
          video.drawn++;
          drawnAt.push(now);
          if (capture > 0) {
            lastCapture = capture;
            video.ages.push(now - capture);
            if (video.ages.length > 300) video.ages.shift();
          }
        },
        error: (e) => {
          video.decodeErrors++;
          video.lastError = e.message;
          stop(`the decoder failed: ${e.message}`);
        },
      });
      decoder.configure({
        codec: String(m.codec),
        codedWidth: canvas.width,
        codedHeight: canvas.height,
        optimizeForLatency: true,
      });
      waitingForKey = true;
    } else if (m.type === "camera_stats") {
      video.ground = m;
    } else if (m.type === "camera_end") {
      ended = `the view ended: ${String(m.error || "")}`;
    }
  }

  function onFrame(buffer: ArrayBuffer): void {
    if (!decoder || buffer.byteLength <= HEADER_BYTES) return;
    video.received++;
    const view = new DataView(buffer);
    const key = (view.getUint8(1) & 1) !== 0;
    const number = view.getUint32(4, true);
    const capture = view.getFloat64(8, true);
    if (waitingForKey && !key) return;
    waitingForKey = false;
    const timestamp = number * 1000; // [µs], only an identity here
    if (capture > 0) captureOf.set(timestamp, capture);
    try {
      decoder.decode(new EncodedVideoChunk({
        type: key ? "key" : "delta", timestamp, data: new Uint8Array(buffer, HEADER_BYTES),
      }));
    } catch (e) {
      video.decodeErrors++;
      video.lastError = (e as Error).message;
      stop(`the decoder refused a frame: ${video.lastError}`);
    }
  }

  watchBtn.addEventListener("click", () => {
    if (socket) stop("stopped");
    else if (select.value) start(select.value);
  });

  setInterval(() => {
    const now = Date.now();
    drawnAt = drawnAt.filter((t) => now - t <= 1000);
    video.fps = drawnAt.length;
    if (!socket || !decoder) return;
    const age = lastCapture > 0 ? ageShort(now - lastCapture) : "of unknown age";
    const lost = Number((video.ground as { lost?: number } | null)?.lost ?? 0);
    status.textContent = `${video.camera}: ${video.fps} fps · frame on screen ${age}${lastCapture > 0 ? " old" : ""}` +
      (lost > 0 ? ` · ${lost} lost` : "");
  }, 500);
  refresh();
}
