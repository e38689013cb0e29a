// Messages of the console's WebSocket protocol v1 (local_site/web/PROTOCOL.md). Only the
// fields the console reads are typed; everything else passes through untouched.

export type Vec3 = [number, number, number];
export type Quat = [number, number, number, number]; // w, x, y, z

export interface Pose {
  p: Vec3;
  quat: Quat;
}

export interface SiteInfo {
  name: string;
  address: string;
  arm?: string;
}

export interface HelloMsg {
  type: "hello";
  version: number;
  operator: string;
  sites: SiteInfo[];
  teleop_site: string;
  /** tether-ground's --device: only "web" takes the browser's gamepad. */
  teleop_device?: string;
  telemetry_hz: number;
  /** Whether the ground asks for logins; `operator` is then the logged-in person. */
  logins?: boolean;
}

export interface ArmMsg {
  type: "arm";
  site: string;
  name: string;
  joints: { name: string; lower: number; upper: number }[];
  links: { radius: number }[];
}

/** A body of the site's scene, at its joint's zero (BASE frame, metres). */
export interface SceneBodyMsg {
  name: string;
  /** box: size = half extents; sphere: size[0] = radius; cylinder: radius, -, half length (z). */
  shape: "box" | "sphere" | "cylinder";
  size: Vec3;
  p: Vec3;
  quat: Quat;
  /** The scene joint that carries it (the door's hinge); "" when fixed. */
  joint: string;
  obstacle: boolean;
  contact: boolean;
  /** A tag36h11 AprilTag printed on its +z face, centred, its sides along x and y. */
  tag?: SceneTagMsg;
}

export interface SceneTagMsg {
  id: number;
  /** [m] side of the black square (the white margin, one cell wide, is outside it). */
  size: number;
  /** 100 characters, 10 rows of 10 from the tag's top (row 0 at the body's +y edge, column 0
   * at its -x edge, read from +z), '0' black and '1' white, the margin included. */
  cells: string;
}

/** A scene joint; its angle is the telemetry's aux entry named `label`. */
export interface SceneJointMsg {
  name: string;
  label: string;
  position: Vec3;
  axis: Vec3;
}

/** A camera of the site (C frame: z out of the lens, x right, y down; BASE, at the start). */
export interface SceneCameraMsg {
  name: string;
  /** "" fixed, "gripper", "camera_mount". */
  mount: string;
  p: Vec3;
  quat: Quat;
  /** [rad] horizontal. */
  field_of_view: number;
  width: number;
  height: number;
  frame_rate: number;
  stereo_partner: string;
}

export interface SceneMsg {
  name: string;
  bodies: SceneBodyMsg[];
  joints: SceneJointMsg[];
  cameras?: SceneCameraMsg[];
}

export interface SiteMsg {
  type: "site";
  /** What the site's arm works in; null until the site reports a scene. */
  scene?: SceneMsg | null;
  name: string;
  connected: boolean;
  state: string;
  breach: { cause: string; detail: string };
  lease_holder: string;
  link_rtt_ms: number | null;
  task: { name: string; id: number } | null;
  /** Why the last status poll failed (then connected is false). */
  error?: string;
  /** The ground's wall clock [ms since the epoch] at the last status poll that answered. */
  polled_unix_ms?: number | null;
}

export interface Obstacle {
  c: Vec3;
  r: number;
  influence: number;
}

export interface TelemetryMsg {
  type: "telemetry";
  site: string;
  cycle: number;
  t: number;
  task_t: number;
  state: string;
  q: number[];
  q_cmd: number[];
  points: Vec3[];
  /** null until the ground knows the site's arm. */
  motion: Pose | null;
  reference: Pose | null;
  psi: number;
  p_achieved: number;
  p_warn_below: number;
  clearance: number | null;
  wrench: number[];
  wrench_bounds: { force: number | null; torque: number | null } | null;
  obstacles: Obstacle[];
  timing: { period_error_us: number; compute_us?: number; overruns: number };
  breach?: { cause: string; detail: string } | null;
  task?: { name: string; id: number } | null;
  link_rtt_ms: number | null;
  /** A stop released the operator's enable: release it and press it again to move. */
  awaiting_release?: boolean;
  // The teleoperation data plane of the newest increment and the increments recovered from
  // its redundancy (docs/teleoperation-links.md).
  plane?: 'none' | 'stream' | 'datagram';
  concealed?: number;
  dropped: number;
  predicted: { points: Vec3[] } | null;
  /** The scene's joint readings (the door's angle [rad]), by label. */
  aux?: { name: string; value: number | null }[] | null;
  /** The site's wall clock [ms since the epoch] when it took the sample. */
  sample_unix_ms?: number | null;
}

export interface FieldError {
  field: string;
  message: string;
  /** Where a text that does not parse went wrong, 1-based. */
  line?: number;
  column?: number;
}

export interface ReplyMsg {
  type: "reply";
  id: number;
  ok: boolean;
  error?: string;
  errors?: FieldError[];
  [key: string]: unknown;
}

export interface AuditMsg {
  type: "audit";
  site: string;
  lines: string[];
  next: number;
}

export interface TeleopMsg {
  type: "teleop";
  site: string;
  enabled: boolean;
  mode: string;
  reason: string;
}

export type ServerMsg =
  | HelloMsg
  | ArmMsg
  | SiteMsg
  | TelemetryMsg
  | ReplyMsg
  | AuditMsg
  | TeleopMsg;

export type TeleopMode = "tool" | "world" | "camera";

/** Error thrown for a reply with ok:false; keeps the per-field errors for the editor. */
export class RequestError extends Error {
  constructor(
    message: string,
    readonly errors: FieldError[],
    readonly reply: ReplyMsg | null,
  ) {
    super(message);
  }
}
