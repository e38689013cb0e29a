// The cameras panel: the active site's cameras (its scene's), one watched at a time. A view
// is a WebSocket of its own (/video?site=…&camera=…, never the console's control socket)
// carrying the camera's description as text, then its VP9 frames as binary messages, which
// the browser decodes with WebCodecs and draws. Under the picture: the frame rate, the age
// of the frame on screen (its capture time, put on the ground's clock by the link's
// estimate, against now) and what was lost.
//
// Over the picture, the predicted arm (a predictive display): each frame carries where the
// camera was when it took it, and the arm the ground predicts (a delayed link with a local
// model) is drawn through that pose as a ghost, with a thin outline of the arm as last
// reported, so the operator sees how far the delayed picture lags behind both.
//
// A camera of a stereo pair is also shown with its partner, side by side or as a red-cyan
// anaglyph: two views (two sockets, two decoders) composed on one canvas.
//
// A view can be camera mode's EYE (/video eye=1, the lease holder's): while it plays, the site
// sets the running task's EYE frame from the camera's pose, so camera-mode increments move the
// arm as seen in the picture. The stereo pair's pan-tilt head is aimed from here (the aim
// request on the control socket).
import { el, stats, type Store } from "./store";
import type { Session } from "./session";
import type { Connection } from "./connection";
import type { Pose, Quat, SceneCameraMsg, Vec3 } from "./protocol";
import { ageShort } from "./readout_values";
import { ARM_COLOR, GHOST_COLOR, css } from "./scene";

/** Nearer than this to the camera [m] (or behind it) a segment is cut off. */
const NEAR = 0.02;
/** The width [px] of a link the arm message does not size (an older ground). */
const UNSIZED_LINK_PX = 6;

export type StereoMode = "single" | "side-by-side" | "anaglyph";

/** One view's counts (a camera's socket and decoder). */
export interface StreamStats {
  camera: string;
  received: number;
  decoded: number;
  /** Frames of this camera put on the canvas (in an anaglyph: that made it into a picture). */
  drawn: number;
  decodeErrors: number;
  /** Frames drawn per second, over the last second. */
  fps: number;
  /** The ground's counts, from its last camera_stats message. */
  ground: Record<string, unknown> | null;
}

/** What the browser tests read of the video (window.__tetherStats.video). */
export interface VideoStats {
  /** The camera watched (of a stereo pair: the left one). */
  camera: string;
  /** Binary frames received and decoded, over the view's sockets. */
  received: number;
  decoded: number;
  /** Frames of the watched (left) camera drawn. */
  drawn: number;
  decodeErrors: number;
  /** Capture-to-drawn ages [ms] of the last 300 frames of the watched (left) camera drawn
   *  whose capture time is known. */
  ages: number[];
  /** Capture-to-arrival ages [ms] of the last 300 frames of the watched (left) camera this
   *  page received whose capture time is known: the site, the link and the ground's part of
   *  `ages`; the rest is this browser's (decode and draw). */
  arrivals: number[];
  /** Of `arrivals`, the part after the ground sent the frame [ms] (its WebSocket and this
   *  page's main thread taking the message), for the same frames. */
  fromGround: number[];
  /** Frames of the watched (left) camera drawn per second, over the last second. */
  fps: number;
  /** The ground's counts for the watched (left) camera, from its last camera_stats. */
  ground: Record<string, unknown> | null;
  /** The decoders' states and the last thing that went wrong (a failed decoder, a frame
   *  that did not parse). */
  decoderState: () => string;
  lastError: string;
  /** Where the camera was when it took the frame last drawn (BASE; of a pair the left
   *  one), or null when the frame did not say. */
  pose: Pose | null;
  overlay: {
    /** Segments drawn in the last overlay: the predicted arm's and the reported arm's. */
    drawnSegments: number;
    ghostSegments: number;
    armSegments: number;
    /** Whether the telemetry drawn carried a predicted arm. */
    predicted: boolean;
    /** A BASE point [m] to the pixel [u, v] of the camera's image, through the pose of the
     *  frame last drawn; null without one or behind the camera. */
    project: (p: Vec3) => [number, number] | null;
  };
  /** The stereo pair's views, null when one camera is watched alone. */
  stereo: { mode: StereoMode; left: StreamStats; right: StreamStats } | null;
  /** The views (sockets and decoders) open now: 0 stopped, 1, or 2 for a stereo pair. */
  streams: number;
  /** The view on screen sets camera mode's EYE frame (/video eye=1). */
  eye: boolean;
  /** The pan-tilt head's aim this page last asked for on the active site, and its refusal. */
  aim: { pan_deg: number; tilt_deg: number; lastError: string };
}

/** What a frame's header says besides its bytes. */
interface FrameMeta {
  number: number;
  /** [ms since the epoch, the ground's clock]; 0 unknown. */
  capture: number;
  pose: Pose | null;
}

/** The binary frame's header (local_site/web/PROTOCOL.md, /video): its length by version. */
const HEADER_BYTES: Record<number, number> = { 1: 24, 2: 56 };

/** Parses a binary frame: its header and where the VP9 frame starts, or what is wrong. */
function parseFrame(buffer: ArrayBuffer): { key: boolean; meta: FrameMeta; sent: number; offset: number } | string {
  if (buffer.byteLength < 1) return "an empty frame";
  const view = new DataView(buffer);
  const version = view.getUint8(0);
  const offset = HEADER_BYTES[version];
  if (offset === undefined) return `a frame of an unknown header version (${version})`;
  if (buffer.byteLength <= offset) return `a frame of ${buffer.byteLength} bytes (version ${version}): no picture`;
  const flags = view.getUint8(1);
  let pose: Pose | null = null;
  if (version >= 2 && (flags & 4) !== 0) {
    const f = (i: number) => view.getFloat32(24 + 4 * i, true);
    const q = [f(3), f(4), f(5), f(6)];
    const n = Math.hypot(...q);
    if (n > 0.5 && n < 1.5) pose = { p: [f(0), f(1), f(2)], quat: q.map((v) => v / n) as Quat };
  }
  return {
    key: (flags & 1) !== 0,
    meta: { number: view.getUint32(4, true), capture: view.getFloat64(8, true), pose },
    sent: view.getFloat64(16, true),
    offset,
  };
}

/** A BASE point in the camera frame C of `pose` (C in BASE): Rᵀ (x − p). */
function toCamera(pose: Pose, x: Vec3): Vec3 {
  const [w, qx, qy, qz] = pose.quat;
  const d = [x[0] - pose.p[0], x[1] - pose.p[1], x[2] - pose.p[2]];
  // The rotation matrix's columns are C's axes in BASE; a row of Rᵀ is one of them.
  const cx = [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy + w * qz), 2 * (qx * qz - w * qy)];
  const cy = [2 * (qx * qy - w * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz + w * qx)];
  const cz = [2 * (qx * qz + w * qy), 2 * (qy * qz - w * qx), 1 - 2 * (qx * qx + qy * qy)];
  const dot = (a: number[]) => a[0] * d[0] + a[1] * d[1] + a[2] * d[2];
  return [dot(cx), dot(cy), dot(cz)];
}

/** A pinhole camera of square pixels with its principal point at the image's centre. */
interface Intrinsics {
  width: number;
  height: number;
  /** fx = fy [px]. */
  f: number;
}

function intrinsics(width: number, height: number, fieldOfView: number): Intrinsics | null {
  if (!(width > 0 && height > 0 && fieldOfView > 0 && fieldOfView < Math.PI)) return null;
  return { width, height, f: width / 2 / Math.tan(fieldOfView / 2) };
}

/** A point of C in front of the camera to its pixel. */
const pixel = (k: Intrinsics, c: Vec3): [number, number] =>
  [k.width / 2 + (k.f * c[0]) / c[2], k.height / 2 + (k.f * c[1]) / c[2]];

/** The part of the segment a–b (C) in front of the near plane, or null. */
function clipNear(a: Vec3, b: Vec3): [Vec3, Vec3] | null {
  if (a[2] <= NEAR && b[2] <= NEAR) return null;
  const cut = (inFront: Vec3, behind: Vec3): Vec3 => {
    const s = (inFront[2] - NEAR) / (inFront[2] - behind[2]);
    return [inFront[0] + s * (behind[0] - inFront[0]), inFront[1] + s * (behind[1] - inFront[1]), NEAR];
  };
  if (a[2] <= NEAR) return [cut(b, a), b];
  if (b[2] <= NEAR) return [a, cut(a, b)];
  return [a, b];
}

interface StreamHooks {
  /** The camera's description arrived: its picture's size. */
  described(stream: CameraStream, width: number, height: number): void;
  /** A frame was decoded: draw it now (it is closed after). */
  frame(stream: CameraStream, frame: VideoFrame, meta: FrameMeta): void;
  /** The view ended (the site ended it, the socket closed) or failed: why. */
  failed(why: string): void;
}

/**
 * One camera's view: its /video socket, its decoder, what each frame's header said (by the
 * chunk's timestamp, until the decoder gives the frame back) and its counts.
 */
class CameraStream {
  readonly counts: StreamStats;
  /** This view sets camera mode's EYE frame (opened with eye=1). */
  eye = false;
  /** Capture-to-drawn ages [ms] of the last 300 frames drawn whose capture time is known. */
  readonly ages: number[] = [];
  /** Capture-to-arrival ages [ms] of the last 300 frames received whose capture time is known. */
  readonly arrivals: number[] = [];
  /** Ground-sent-to-arrival [ms] of the same frames. */
  readonly fromGround: number[] = [];
  /** The newest capture time drawn [ms since the epoch], 0 none known. */
  lastCapture = 0;
  lastError = "";
  /** The picture's size [px] as the site described it; 0 until then. */
  width = 0;
  height = 0;
  private decoder: VideoDecoder | null = null;
  private waitingForKey = true;
  private readonly metaOf = new Map<number, FrameMeta>(); // chunk timestamp → header
  private drawnAt: number[] = [];
  private closed = false;
  private readonly socket: WebSocket;

  constructor(readonly camera: string, url: string, private readonly hooks: StreamHooks) {
    this.counts = { camera, received: 0, decoded: 0, drawn: 0, decodeErrors: 0, fps: 0, ground: null };
    const ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    ws.onmessage = (e: MessageEvent) => {
      if (this.closed) return;
      if (typeof e.data === "string") this.onText(JSON.parse(e.data) as Record<string, unknown>);
      else this.onFrame(e.data as ArrayBuffer);
    };
    ws.onclose = () => {
      if (!this.closed) this.hooks.failed(`the view of ${camera} closed`);
    };
    this.socket = ws;
  }

  /** Whether the site described the camera (its frames can be decoded). */
  get open(): boolean {
    return this.decoder !== null;
  }

  decoderState(): string {
    return this.decoder ? `${this.decoder.state}, ${this.decoder.decodeQueueSize} queued` : "none";
  }

  /** Counts a frame of this camera put on the screen. */
  markDrawn(meta: FrameMeta, now = Date.now()): void {
    this.counts.drawn++;
    this.drawnAt.push(now);
    if (meta.capture > 0) {
      this.lastCapture = meta.capture;
      this.ages.push(now - meta.capture);
      if (this.ages.length > 300) this.ages.shift();
    }
  }

  /** Updates the frame rate (frames drawn in the last second). */
  tick(now = Date.now()): void {
    this.drawnAt = this.drawnAt.filter((t) => now - t <= 1000);
    this.counts.fps = this.drawnAt.length;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.close();
    try {
      this.decoder?.close();
    } catch {
      // already closed by an error
    }
    this.decoder = null;
  }

  private fail(why: string): void {
    this.lastError = why;
    this.hooks.failed(why);
  }

  private onText(m: Record<string, unknown>): void {
    if (m.type === "camera") {
      const width = Number(m.width) || 640;
      const height = Number(m.height) || 480;
      try {
        this.decoder?.close(); // a second description: start afresh
      } catch {
        // already closed by an error
      }
      this.metaOf.clear();
      this.decoder = new VideoDecoder({
        output: (frame) => {
          this.counts.decoded++;
          // Frames come back in order: what waits for earlier ones was dropped.
          let meta: FrameMeta = { number: 0, capture: 0, pose: null };
          for (const [t, m] of this.metaOf) {
            if (t > frame.timestamp) break;
            if (t === frame.timestamp) meta = m;
            this.metaOf.delete(t);
          }
          try {
            if (!this.closed) this.hooks.frame(this, frame, meta);
          } finally {
            frame.close();
          }
        },
        error: (e) => {
          this.counts.decodeErrors++;
          this.fail(`the decoder of ${this.camera} failed: ${e.message}`);
        },
      });
      this.decoder.configure({
        codec: String(m.codec), codedWidth: width, codedHeight: height, optimizeForLatency: true,
      });
      this.waitingForKey = true;
      this.width = width;
      this.height = height;
      this.hooks.described(this, width, height);
    } else if (m.type === "camera_stats") {
      this.counts.ground = m;
    } else if (m.type === "camera_end") {
      // Nothing follows (the ground keeps the socket open): the view is over, and of a
      // pair, its partner's with it.
      this.hooks.failed(`the view of ${this.camera} ended: ${String(m.error || "")}`);
    }
  }

  private onFrame(buffer: ArrayBuffer): void {
    if (!this.decoder) return;
    const parsed = parseFrame(buffer);
    if (typeof parsed === "string") {
      this.lastError = parsed;
      return;
    }
    this.counts.received++;
    if (parsed.meta.capture > 0) {
      const now = Date.now();
      this.arrivals.push(now - parsed.meta.capture);
      this.fromGround.push(now - parsed.sent);
      if (this.arrivals.length > 300) {
        this.arrivals.shift();
        this.fromGround.shift();
      }
    }
    if (this.waitingForKey && !parsed.key) return;
    this.waitingForKey = false;
    const timestamp = parsed.meta.number * 1000; // [µs], only an identity here
    this.metaOf.set(timestamp, parsed.meta);
    try {
      this.decoder.decode(new EncodedVideoChunk({
        type: parsed.key ? "key" : "delta", timestamp, data: new Uint8Array(buffer, parsed.offset),
      }));
    } catch (e) {
      this.counts.decodeErrors++;
      this.fail(`the decoder of ${this.camera} refused a frame: ${(e as Error).message}`);
    }
  }
}

/** A canvas of the picture's size for one side of an anaglyph. */
function sideCanvas(): { canvas: HTMLCanvasElement; g: CanvasRenderingContext2D | null } {
  const canvas = document.createElement("canvas");
  return { canvas, g: canvas.getContext("2d") };
}

/** The view on screen: its streams (one, or a stereo pair's left and right), how they are
 *  composed and the size of one camera's picture. */
interface View {
  site: string;
  mode: StereoMode;
  streams: CameraStream[];
  /** The watched camera, or the pair's left one: its picture carries the overlay. */
  primary: CameraStream;
  /** One picture's size [px] and the primary camera's horizontal field of view [rad]. */
  width: number;
  height: number;
  fieldOfView: number;
  /** Anaglyph: each side's latest frame, already filtered to its colours, and its header
   *  until a composed picture showed it. */
  sides: { canvas: HTMLCanvasElement; g: CanvasRenderingContext2D | null; pending: FrameMeta | null; shown: FrameMeta | null }[];
  /** The header of the primary's frame on screen. */
  shown: FrameMeta | null;
}

/** The pan-tilt head's range [deg] (AimCamera) and a press's step. */
const MAX_PAN = 90;
const MAX_TILT = 45;
const AIM_STEP = 10;

export function mountCameras(root: HTMLElement, store: Store, session: Session, conn: Connection): void {
  let view: View | null = null;
  /** The view last started, playing or not: what the counts are of. */
  let last: View | null = null;
  const sum = (f: (c: StreamStats) => number) => (last ? last.streams.reduce((a, s) => a + f(s.counts), 0) : 0);
  const video: VideoStats = {
    camera: "",
    get received() { return sum((c) => c.received); },
    get decoded() { return sum((c) => c.decoded); },
    get drawn() { return last?.primary.counts.drawn ?? 0; },
    get decodeErrors() { return sum((c) => c.decodeErrors); },
    ages: [],
    arrivals: [],
    fromGround: [],
    get fps() { return last?.primary.counts.fps ?? 0; },
    get ground() { return last?.primary.counts.ground ?? null; },
    decoderState: () => (view ? view.streams.map((s) => s.decoderState()).join("; ") : "none"),
    get lastError() { return last?.streams.map((s) => s.lastError).find((e) => e) ?? ""; },
    pose: null,
    overlay: {
      drawnSegments: 0, ghostSegments: 0, armSegments: 0, predicted: false,
      project: (p) => {
        const pose = last?.shown?.pose;
        const k = last ? intrinsics(last.width, last.height, last.fieldOfView) : null;
        if (!pose || !k) return null;
        const c = toCamera(pose, p);
        return c[2] > NEAR ? pixel(k, c) : null;
      },
    },
    get stereo() {
      return last && last.mode !== "single"
        ? { mode: last.mode, left: last.streams[0].counts, right: last.streams[1].counts } : null;
    },
    get streams() { return view ? view.streams.length : 0; },
    get eye() { return view?.primary.eye ?? false; },
    aim: { pan_deg: 0, tilt_deg: 0, lastError: "" },
  };
  (stats as typeof stats & { video: VideoStats }).video = video;

  const select = el("select", { id: "camera-choice", title: "the camera to watch" });
  const stereoSel = el("select", { id: "camera-stereo", title: "a stereo pair: one camera, both side by side, or a red-cyan anaglyph" },
    el("option", { value: "single", text: "single" }),
    el("option", { value: "side-by-side", text: "side by side" }),
    el("option", { value: "anaglyph", text: "anaglyph" }));
  const watchBtn = el("button", { id: "camera-watch", text: "watch" });
  const overlayBox = el("input", { type: "checkbox", id: "camera-overlay", checked: "" });
  const overlayLabel = el("label", {
    title: "the arm the ground predicts (ghost) and the arm as last reported (outline), drawn over the delayed picture through the camera's pose",
  }, overlayBox, " predicted arm");
  const eyeBox = el("input", { type: "checkbox", id: "camera-eye" });
  const eyeLabel = el("label", {
    title: "camera-mode teleoperation moves the arm as seen through this camera (the site sets the task's EYE frame from it; it switches cameras only while the hand is not driving)",
  }, eyeBox, " EYE for camera mode");
  // The pan-tilt head of the stereo pair: 10° a press, absolute aims kept per site.
  const aimBtn = (id: string, text: string, title: string) => el("button", { id, text, title });
  const panLeft = aimBtn("camera-pan-left", "◀", "pan the head 10° to the left");
  const panRight = aimBtn("camera-pan-right", "▶", "pan the head 10° to the right");
  const tiltUp = aimBtn("camera-tilt-up", "▲", "tilt the head 10° up");
  const tiltDown = aimBtn("camera-tilt-down", "▼", "tilt the head 10° down");
  const aimCentre = aimBtn("camera-aim-centre", "centre", "aim the head as it started");
  const aimValue = el("span", { class: "dim", id: "camera-aim-value", title: "the aim this page last asked for, from the head's initial aim (pan + left, tilt + up)" });
  const aimRow = el("div", { id: "camera-aim" }, "pan-tilt head ", panLeft, panRight, tiltUp, tiltDown, " ", aimCentre,
    " ", aimValue);
  const canvas = el("canvas", { id: "camera-canvas", width: "640", height: "480" });
  canvas.style.width = "100%";
  canvas.style.display = "block";
  // The overlay lies exactly over the picture: same pixels, same box.
  const overlay = el("canvas", { id: "camera-overlay-canvas", width: "640", height: "480" });
  Object.assign(overlay.style, { position: "absolute", left: "0", top: "0", width: "100%", height: "100%", pointerEvents: "none" });
  const stack = el("div", {}, canvas, overlay);
  stack.style.position = "relative";
  stack.style.display = "none";
  const status = el("div", { class: "dim", id: "camera-status", text: "" });
  root.append(el("h2", { text: "cameras" }),
    el("div", {}, select, " ", stereoSel, " ", watchBtn, " ", overlayLabel, " ", eyeLabel), aimRow,
    stack, status);
  const g = canvas.getContext("2d");
  const og = overlay.getContext("2d");

  let ended = "";
  const cameras = (): SceneCameraMsg[] => store.sites.get(store.activeSite)?.scene?.cameras ?? [];
  /** The selected camera's partner, when it has one among the site's cameras. */
  const partnerOf = (name: string): SceneCameraMsg | undefined => {
    const partner = cameras().find((c) => c.name === name)?.stereo_partner;
    return partner ? cameras().find((c) => c.name === partner) : undefined;
  };
  const refresh = () => {
    const names = cameras().map((c) => c.name);
    const current = [...select.options].map((o) => o.value);
    if (names.join() !== current.join()) {
      select.replaceChildren(...names.map((n) => el("option", { value: n, text: n })));
    }
    stereoSel.hidden = !partnerOf(select.value);
    aimRow.hidden = cameras().find((c) => c.name === select.value)?.mount !== "camera_mount";
    watchBtn.disabled = names.length === 0 && !view;
    if (!view) showStopped();
  };
  store.on("site", refresh);
  store.on("active", () => {
    stop("");
    refresh();
  });
  select.addEventListener("change", refresh);

  function stop(why: string): void {
    if (view) for (const s of view.streams) s.close();
    view = null;
    watchBtn.textContent = "watch";
    ended = why;
    if (why) status.textContent = why;
  }

  /** Sizes the canvas (and the overlay, and an anaglyph's sides) for the view's pictures. */
  function size(v: View): void {
    const w = v.mode === "side-by-side" ? 2 * v.width : v.width;
    if (canvas.width !== w || canvas.height !== v.height) {
      canvas.width = overlay.width = w;
      canvas.height = overlay.height = v.height;
    }
    for (const s of v.sides) {
      if (s.canvas.width !== v.width || s.canvas.height !== v.height) {
        s.canvas.width = v.width;
        s.canvas.height = v.height;
      }
    }
    overlayKey = [];
  }

  /** Watches `camera` (with its partner, in a stereo mode). Called while watching (another
   *  mode), it keeps the views of the cameras it still shows and opens only the others: the
   *  site counts every view against the person's streams, and frees a closed one late. */
  function start(camera: string, mode: StereoMode): void {
    if (!("VideoDecoder" in window)) {
      status.textContent = "this browser has no WebCodecs (VideoDecoder): no video here";
      return;
    }
    const chosen = cameras().find((c) => c.name === camera);
    const partner = partnerOf(camera);
    if (!partner) mode = "single";
    // Of a pair, the left camera is the one named so (else the one chosen); the right its partner.
    const pair = partner && (/left$/i.test(camera) || !/left$/i.test(partner.name))
      ? [chosen, partner] : [partner, chosen];
    const names = (mode === "single" ? [chosen] : pair).map((c) => c?.name ?? camera);
    const site = store.activeSite;
    const kept = new Map<string, CameraStream>();
    if (view && view.site === site) {
      for (const s of view.streams) {
        if (names.includes(s.camera)) kept.set(s.camera, s);
        else s.close();
      }
      view = null;
    } else {
      stop("");
    }
    ended = "";
    const hooks: StreamHooks = { described, frame: onFrame, failed: (why) => stop(why) };
    // The EYE is the watched camera's, of a pair the left one's (both are oriented alike).
    const eyeOf = (name: string) => eyeBox.checked && name === names[0];
    const streams = names.map((name) => {
      const old = kept.get(name);
      if (old && old.eye === eyeOf(name)) return old;
      old?.close();
      const query: Record<string, string> = { site, camera: name };
      if (eyeOf(name)) query.eye = "1";
      const stream = new CameraStream(name, session.socketUrl("/video", query), hooks);
      stream.eye = eyeOf(name);
      return stream;
    });
    const primary = streams[0];
    const scene = cameras().find((c) => c.name === primary.camera);
    const v: View = {
      site, mode, streams, primary,
      width: primary.width || scene?.width || 640, height: primary.height || scene?.height || 480,
      fieldOfView: scene?.field_of_view ?? 0,
      sides: mode === "anaglyph" ? streams.map(() => ({ ...sideCanvas(), pending: null, shown: null })) : [],
      shown: null,
    };
    view = last = v;
    size(v);
    g?.clearRect(0, 0, canvas.width, canvas.height);
    og?.clearRect(0, 0, overlay.width, overlay.height);
    video.camera = primary.camera;
    video.ages = primary.ages;
    video.arrivals = primary.arrivals;
    video.fromGround = primary.fromGround;
    video.pose = null;
    Object.assign(video.overlay, { drawnSegments: 0, ghostSegments: 0, armSegments: 0, predicted: false });
    watchBtn.textContent = "stop";
    stack.style.display = "";
    status.textContent = `opening ${streams.map((s) => s.camera).join(" and ")}…`;
  }

  function described(stream: CameraStream, width: number, height: number): void {
    // The primary camera's description sizes the picture; its partner's is drawn to it.
    if (!view || stream !== view.primary) return;
    view.width = width;
    view.height = height;
    size(view);
  }

  function onFrame(stream: CameraStream, frame: VideoFrame, meta: FrameMeta): void {
    const v = view;
    if (!v || !g) return;
    const index = v.streams.indexOf(stream);
    if (v.mode === "anaglyph") {
      // Each side keeps its latest frame in its colours (left: red; right: green and blue);
      // the next animation frame adds the two.
      const side = v.sides[index];
      if (side.g) {
        side.g.globalCompositeOperation = "source-over";
        side.g.drawImage(frame, 0, 0, v.width, v.height);
        side.g.globalCompositeOperation = "multiply";
        side.g.fillStyle = index === 0 ? "#ff0000" : "#00ffff";
        side.g.fillRect(0, 0, v.width, v.height);
        side.g.globalCompositeOperation = "source-over";
      }
      side.pending = meta;
      schedule();
      return;
    }
    g.drawImage(frame, index * v.width, 0, v.width, v.height);
    stream.markDrawn(meta);
    if (stream === v.primary) shownNow(v, meta);
  }

  function shownNow(v: View, meta: FrameMeta): void {
    v.shown = meta;
    video.pose = meta.pose;
    overlayDirty = true;
    schedule();
  }

  /** The anaglyph from each side's latest frame: red from the left, cyan from the right. */
  function compose(v: View): void {
    if (!g || !v.sides.some((s) => s.pending)) return;
    g.globalCompositeOperation = "copy";
    g.drawImage(v.sides[0].canvas, 0, 0);
    g.globalCompositeOperation = "lighter";
    g.drawImage(v.sides[1].canvas, 0, 0);
    g.globalCompositeOperation = "source-over";
    const now = Date.now();
    v.sides.forEach((s, i) => {
      if (!s.pending) return;
      v.streams[i].markDrawn(s.pending, now);
      s.shown = s.pending;
      s.pending = null;
    });
    if (v.sides[0].shown) shownNow(v, v.sides[0].shown);
  }

  // The overlay: redrawn when a frame is drawn or telemetry arrives, once per animation frame
  // at most, and only when what it draws changed.
  let overlayDirty = false;
  let overlayKey: number[] = [];
  let requested = false;
  function schedule(): void {
    if (requested) return;
    requested = true;
    requestAnimationFrame(() => {
      requested = false;
      if (!view) return;
      if (view.mode === "anaglyph") compose(view);
      if (overlayDirty) {
        overlayDirty = false;
        drawOverlay(view);
      }
    });
  }
  store.on("telemetry", (site) => {
    if (view && site === view.site && overlayBox.checked) {
      overlayDirty = true;
      schedule();
    }
  });
  overlayBox.addEventListener("change", () => {
    overlayKey = [];
    overlayDirty = true;
    if (view) schedule();
  });

  function drawOverlay(v: View): void {
    if (!og) return;
    const t = store.telemetry.get(v.site);
    const pose = v.shown?.pose ?? null;
    const k = intrinsics(v.width, v.height, v.fieldOfView);
    const on = overlayBox.checked && !!pose && !!k && !!t;
    const key = on
      ? [overlay.width, overlay.height, ...pose!.p, ...pose!.quat, ...t!.points.flat(), -1, ...(t!.predicted?.points.flat() ?? [])]
      : [overlay.width, overlay.height];
    if (key.length === overlayKey.length && key.every((x, i) => x === overlayKey[i])) return;
    overlayKey = key;
    og.clearRect(0, 0, overlay.width, overlay.height);
    video.overlay.predicted = !!t?.predicted;
    video.overlay.ghostSegments = video.overlay.armSegments = video.overlay.drawnSegments = 0;
    if (!on) return;
    const armMsg = store.arms.get(v.site);
    const radii = armMsg ? armMsg.links.map((l) => l.radius) : [];
    /** The arm's links through the pose: pixel ends and width (the link's diameter at its
     *  middle's depth), cut at the near plane. */
    const segments = (points: Vec3[]) => {
      const c = points.map((p) => toCamera(pose!, p));
      const out: { a: [number, number]; b: [number, number]; width: number }[] = [];
      for (let i = 0; i + 1 < c.length; i++) {
        const clipped = clipNear(c[i], c[i + 1]);
        if (!clipped) continue;
        const [a, b] = clipped;
        const z = (a[2] + b[2]) / 2;
        const width = radii[i] !== undefined ? Math.min(80, Math.max(2, (2 * radii[i] * k!.f) / z)) : UNSIZED_LINK_PX;
        out.push({ a: pixel(k!, a), b: pixel(k!, b), width });
      }
      return out;
    };
    const stroke = (s: { a: [number, number]; b: [number, number] }, width: number) => {
      og.lineWidth = width;
      og.beginPath();
      og.moveTo(...s.a);
      og.lineTo(...s.b);
      og.stroke();
    };
    og.save();
    // Of a side-by-side pair, over the left picture only.
    og.beginPath();
    og.rect(0, 0, v.width, v.height);
    og.clip();
    og.lineCap = "round";
    og.lineJoin = "round";
    // The arm as last reported: the outline of its capsules (each drawn wider, then the
    // insides cleared), thin, so the picture shows through.
    const arm = segments(t!.points);
    og.strokeStyle = css(ARM_COLOR, 0.9);
    for (const s of arm) stroke(s, s.width + 3);
    og.globalCompositeOperation = "destination-out";
    og.strokeStyle = "#000";
    for (const s of arm) stroke(s, s.width);
    og.globalCompositeOperation = "source-over";
    // The predicted arm: a translucent ghost.
    const ghost = t!.predicted ? segments(t!.predicted.points) : [];
    og.strokeStyle = css(GHOST_COLOR, 0.45);
    for (const s of ghost) stroke(s, s.width);
    og.restore();
    video.overlay.armSegments = arm.length;
    video.overlay.ghostSegments = ghost.length;
    video.overlay.drawnSegments = arm.length + ghost.length;
  }

  const restart = () => {
    if (view && select.value) start(select.value, stereoSel.value as StereoMode);
  };
  stereoSel.addEventListener("change", restart);
  // The EYE box reopens the view on screen (its camera and mode, whatever is selected now):
  // the primary stream with or without eye=1, its partner's kept.
  eyeBox.addEventListener("change", () => {
    if (view) start(view.primary.camera, view.mode);
  });

  // The pan-tilt head: the page's target (pan, tilt) per site, moved a step a press within
  // the head's range and sent as an absolute aim. One aim of a site is in flight at a time
  // (the ground runs calls on two threads, which could reorder two aims); presses meanwhile
  // move the target, which is sent when the reply is in. A refusal puts the target back to
  // what the site last accepted (unless pressed again meanwhile) and stays in the status line
  // until an aim is accepted.
  interface Aim {
    pan: number;
    tilt: number;
    accepted: { pan: number; tilt: number };
    camera: string;
    inFlight: boolean;
    again: boolean;
    error: string;
  }
  const aims = new Map<string, Aim>();
  const aimOf = (site: string): Aim => {
    let a = aims.get(site);
    if (!a) {
      a = { pan: 0, tilt: 0, accepted: { pan: 0, tilt: 0 }, camera: "", inFlight: false, again: false, error: "" };
      aims.set(site, a);
    }
    return a;
  };
  function showAim(): void {
    const a = aimOf(store.activeSite);
    Object.assign(video.aim, { pan_deg: a.pan, tilt_deg: a.tilt, lastError: a.error });
    aimValue.textContent = `pan ${a.pan}° tilt ${a.tilt}°`;
    if (!view) showStopped();
  }
  const sendAim = (site: string) => {
    const a = aimOf(site);
    if (a.inFlight) {
      a.again = true;
      return;
    }
    const want = { pan: a.pan, tilt: a.tilt };
    a.inFlight = true;
    conn.request({ type: "aim", site, camera: a.camera, pan_deg: want.pan, tilt_deg: want.tilt }).then(
      (r) => {
        a.accepted = { pan: Number(r.pan_deg ?? want.pan), tilt: Number(r.tilt_deg ?? want.tilt) };
        a.error = "";
      },
      (e: Error) => {
        a.error = e.message;
        if (!a.again) {
          a.pan = a.accepted.pan;
          a.tilt = a.accepted.tilt;
        }
      },
    ).finally(() => {
      a.inFlight = false;
      if (a.again) {
        a.again = false;
        sendAim(site);
      }
      if (site === store.activeSite) {
        showAim();
        if (a.error) status.textContent = statusLine();
      }
    });
  };
  const aim = (dPan: number, dTilt: number, centre = false) => {
    const site = store.activeSite;
    const a = aimOf(site);
    const clamp = (v: number, most: number) => Math.max(-most, Math.min(most, v));
    a.pan = centre ? 0 : clamp(a.pan + dPan, MAX_PAN);
    a.tilt = centre ? 0 : clamp(a.tilt + dTilt, MAX_TILT);
    a.camera = select.value;
    showAim();
    sendAim(site);
  };
  panLeft.addEventListener("click", () => aim(AIM_STEP, 0));
  panRight.addEventListener("click", () => aim(-AIM_STEP, 0));
  tiltUp.addEventListener("click", () => aim(0, AIM_STEP));
  tiltDown.addEventListener("click", () => aim(0, -AIM_STEP));
  aimCentre.addEventListener("click", () => aim(0, 0, true));
  store.on("active", showAim);
  /** The active site's last aim refusal, for the status line; empty when none. */
  const aimNote = () => {
    const e = aimOf(store.activeSite).error;
    return e ? `aim refused: ${e}` : "";
  };
  /** The status line without a view: why the last one ended, and a refused aim. */
  function showStopped(): void {
    const why = cameras().length === 0 ? "the site reports no cameras" : ended;
    status.textContent = [why, aimNote()].filter((x) => x).join(" · ");
  }
  watchBtn.addEventListener("click", () => {
    if (view) stop("stopped");
    else if (select.value) start(select.value, stereoSel.value as StereoMode);
  });

  /** The status line of the view playing: rates, the age of the picture, losses, whether it
   *  is the EYE, and a refused aim. */
  function statusLine(now = Date.now()): string {
    const v = view;
    if (!v) return status.textContent ?? "";
    if (!v.streams.every((s) => s.open)) {
      const note = aimNote();
      return `opening ${v.streams.map((s) => s.camera).join(" and ")}…${note ? ` · ${note}` : ""}`;
    }
    // The age of the picture: of a pair, of its older side.
    const captures = v.streams.map((s) => s.lastCapture);
    const oldest = Math.min(...captures);
    const age = oldest > 0 ? `${ageShort(now - oldest)} old` : "of unknown age";
    const lost = sum((c) => Number((c.ground as { lost?: number } | null)?.lost ?? 0));
    const what = v.mode === "single"
      ? `${v.primary.camera}: ${v.primary.counts.fps} fps · frame on screen ${age}`
      : `${v.streams.map((s) => s.camera).join(" + ")} (${v.mode === "anaglyph" ? "anaglyph" : "side by side"}): ` +
        `${v.streams.map((s) => s.counts.fps).join(" + ")} fps · frames on screen ${age}`;
    return [what, lost > 0 ? `${lost} lost` : "", v.primary.eye ? "EYE for camera mode" : "", aimNote()]
      .filter((x) => x).join(" · ");
  }
  setInterval(() => {
    const now = Date.now();
    const v = view;
    if (!v) return;
    for (const s of v.streams) s.tick(now);
    status.textContent = statusLine(now);
  }, 500);
  refresh();
  showAim();
}
