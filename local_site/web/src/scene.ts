// The 3-D view of the active site: the arm as capsules between consecutive telemetry points
// with the arm message's link radii, the MOTION frame, the reference pose (ghost axes), the
// obstacles (sphere and sphere of influence), the site's scene as it reports it (the door,
// its frame and handle turning with the hinge's reading, the wall, the plate, the target) and,
// on a delayed link, the predicted arm as a ghost. Z is up, as in the robot's BASE frame. Renders at most once per animation frame and
// only when something changed.
//
// What it costs the page is budgeted (render_budget.ts): on a software GL it starts at half
// resolution and 10 Hz, and when the page's frame rate falls below what the plots need it
// steps down to a third of the resolution at 4 Hz and then to a 2-D canvas drawing of the
// same telemetry (side and top views), which is also what it draws when WebGL is not there
// at all (disabled, blocklisted, a context that cannot be created or is lost). A note under
// the view says which, and why; the operator may choose the level instead.
import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import { el, stats, type Store } from "./store";
import type { ArmMsg, Pose, SceneMsg, SceneTagMsg, TelemetryMsg, Vec3 } from "./protocol";
import {
  isSoftwareRenderer, LEVEL_2D, LevelChooser, levels, meterFrames, rendererName,
  type Choice, type Level, type RenderMode,
} from "./render_budget";
import { ageLabel } from "./readout_values";
import { TAG_CELLS, tagTexels } from "./tag_texture";

/** The arm's colour; the browser test looks for it in the screenshot. */
export const ARM_COLOR = 0xff8c1a;
/** The predicted arm's colour: the ghost in the 3-D view and over the camera video. */
export const GHOST_COLOR = 0x7fb8ff;
const BACKGROUND = 0x15181c;
const Y = new THREE.Vector3(0, 1, 0);
/** A colour as CSS, for the 2-D canvases. */
export const css = (c: number, alpha = 1) =>
  `rgba(${(c >> 16) & 255},${(c >> 8) & 255},${c & 255},${alpha})`;

/** What the browser tests read of the view, besides sceneRenders (window.__tetherStats). */
export interface SceneStats {
  renderMode: RenderMode;
  /** The WebGL renderer's name ("" without WebGL). */
  renderer: string;
  /** Draws of the view in the last second, and the page's frames in the last second. */
  sceneHz: number;
  frameHz: number;
  renderBudget: { level: number; label: string; choice: Choice; reason: string; changes: number; fps: number[] };
}
const sceneStats = stats as typeof stats & SceneStats;

type Projection = ReturnType<typeof stats.sceneProjection>;

/** A capsule made of a unit cylinder and two unit spheres, scaled per frame (no new geometry). */
class Capsule {
  readonly group = new THREE.Group();
  private cyl: THREE.Mesh;
  private a: THREE.Mesh;
  private b: THREE.Mesh;
  constructor(cylGeo: THREE.BufferGeometry, sphGeo: THREE.BufferGeometry, mat: THREE.Material) {
    this.cyl = new THREE.Mesh(cylGeo, mat);
    this.a = new THREE.Mesh(sphGeo, mat);
    this.b = new THREE.Mesh(sphGeo, mat);
    this.group.add(this.cyl, this.a, this.b);
  }
  set(p0: THREE.Vector3, p1: THREE.Vector3, r: number): void {
    const d = new THREE.Vector3().subVectors(p1, p0);
    const len = d.length();
    this.cyl.position.addVectors(p0, p1).multiplyScalar(0.5);
    if (len > 1e-9) this.cyl.quaternion.setFromUnitVectors(Y, d.divideScalar(len));
    this.cyl.scale.set(r, Math.max(len, 1e-6), r);
    this.a.position.copy(p0);
    this.b.position.copy(p1);
    this.a.scale.setScalar(r);
    this.b.scale.setScalar(r);
  }
}

class ArmModel {
  readonly group = new THREE.Group();
  private capsules: Capsule[] = [];
  constructor(
    private readonly cylGeo: THREE.BufferGeometry,
    private readonly sphGeo: THREE.BufferGeometry,
    private readonly mat: THREE.Material,
  ) {}
  update(points: Vec3[], radii: number[]): void {
    const n = Math.max(points.length - 1, 0);
    while (this.capsules.length < n) {
      const c = new Capsule(this.cylGeo, this.sphGeo, this.mat);
      this.capsules.push(c);
      this.group.add(c.group);
    }
    for (let i = 0; i < this.capsules.length; i++) {
      const c = this.capsules[i];
      c.group.visible = i < n;
      if (i >= n) continue;
      // A link the arm message does not size (an older ground) is drawn 4 cm thick.
      c.set(new THREE.Vector3(...points[i]), new THREE.Vector3(...points[i + 1]), radii[i] ?? 0.04);
    }
  }
}

function setPose(obj: THREE.Object3D, pose: Pose): void {
  obj.position.set(...pose.p);
  const [w, x, y, z] = pose.quat;
  obj.quaternion.set(x, y, z, w);
}

function ghostAxes(size: number): THREE.AxesHelper {
  const a = new THREE.AxesHelper(size);
  const m = a.material as THREE.LineBasicMaterial;
  m.transparent = true;
  m.opacity = 0.35;
  return a;
}

/**
 * What the view draws of a telemetry message, as numbers: the arm's link radii and points,
 * the MOTION and reference frames, the predicted arm and the obstacles. Two messages with
 * the same numbers (within 10 µm) draw the same picture.
 */
function drawnNumbers(t: TelemetryMsg | undefined, radii: number[]): number[] {
  if (!t) return [];
  const out: number[] = [radii.length, ...radii, t.points.length, t.obstacles.length];
  out.push(t.predicted ? t.predicted.points.length : -1);
  for (const p of t.points) out.push(...p);
  for (const pose of [t.motion, t.reference]) {
    if (pose) out.push(1, ...pose.p, ...pose.quat);
    else out.push(0);
  }
  if (t.predicted) for (const p of t.predicted.points) out.push(...p);
  for (const o of t.obstacles) out.push(...o.c, o.r, o.influence);
  return out;
}

function sameNumbers(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!(Math.abs(a[i] - b[i]) <= 1e-5)) return false;
  return true;
}

/** The shape of a scene body, in its own frame (three's cylinders run along y; ours along z). */
function bodyGeometry(shape: string, size: Vec3): THREE.BufferGeometry {
  if (shape === "sphere") return new THREE.SphereGeometry(size[0], 20, 12);
  if (shape === "cylinder") return new THREE.CylinderGeometry(size[0], size[0], 2 * size[2], 16).rotateX(Math.PI / 2);
  return new THREE.BoxGeometry(2 * size[0], 2 * size[1], 2 * size[2]);
}

/** Colours an operator tells apart from the arm's orange and the obstacles' red. */
function bodyColor(name: string): number {
  if (name === "door_panel") return 0x7a6450;
  if (name.startsWith("door_frame")) return 0x6e7378;
  if (name === "door_handle") return 0xc8ccd0;
  if (name === "visual_target") return 0xf0f0f0;
  return 0x8a96a3; // the wall, the plate
}

function disposeTree(o: THREE.Object3D): void {
  o.traverse((n) => {
    if (n instanceof THREE.Mesh) {
      n.geometry.dispose();
      const material = n.material as THREE.Material & { map?: THREE.Texture | null };
      material.map?.dispose();
      material.dispose();
    }
  });
}

/** The height of a body's +z face above its origin [m] (bodyGeometry's shapes). */
function topFace(shape: string, size: Vec3): number {
  return shape === "sphere" ? size[0] : size[2];
}

/** The tag's printed cells, the white margin included, on its body's +z face, 0.5 mm proud of
 * it so the face does not hide it. */
function tagMesh(tag: SceneTagMsg, shape: string, size: Vec3): THREE.Mesh {
  const texture = new THREE.DataTexture(tagTexels(tag.cells), TAG_CELLS, TAG_CELLS);
  texture.magFilter = THREE.NearestFilter; // sharp cells, as printed
  texture.minFilter = THREE.NearestFilter;
  texture.colorSpace = THREE.SRGBColorSpace;
  texture.needsUpdate = true;
  const side = (tag.size * TAG_CELLS) / (TAG_CELLS - 2);
  const mesh = new THREE.Mesh(new THREE.PlaneGeometry(side, side), new THREE.MeshLambertMaterial({ map: texture }));
  mesh.position.z = topFace(shape, size) + 0.0005;
  return mesh;
}

/** One way of drawing the view: WebGL (three.js) or a 2-D canvas. */
interface View {
  readonly canvas: HTMLCanvasElement;
  readonly mode: "webgl" | "2d";
  /** Sets the drawing buffer to the canvas's size at the level's pixel ratio. */
  resize(level: Level): void;
  draw(t: TelemetryMsg | undefined, arm: ArmMsg | undefined, site: string, scene?: SceneMsg | null): void;
  projection(): Projection;
  dispose(): void;
}

/** The WebGL context options the view asks for: opaque, no MSAA, no stencil. */
const GL_OPTIONS: WebGLContextAttributes = {
  alpha: false, antialias: false, depth: true, stencil: false, premultipliedAlpha: true,
  preserveDrawingBuffer: false, powerPreference: "default",
};

class WebGLView implements View {
  readonly mode = "webgl" as const;
  readonly canvas: HTMLCanvasElement;
  readonly renderer: THREE.WebGLRenderer;
  readonly rendererName: string;
  private readonly scene = new THREE.Scene();
  private readonly camera = new THREE.PerspectiveCamera(45, 1, 0.01, 50);
  private readonly controls: OrbitControls;
  private readonly arm: ArmModel;
  private readonly predicted: ArmModel;
  private readonly motion = new THREE.AxesHelper(0.15);
  private readonly reference = ghostAxes(0.15);
  private readonly obstacleGroup = new THREE.Group();
  private readonly sceneGroup = new THREE.Group();
  private sceneKey = "";
  /** Bodies a scene joint carries: a pivot on the joint's axis, turned by its reading. */
  private pivots: { pivot: THREE.Group; axis: THREE.Vector3; label: string }[] = [];
  private readonly sphGeo: THREE.BufferGeometry;
  private readonly obstacleMat: THREE.Material;
  private readonly influenceMat: THREE.Material;
  private framedSite = "";
  private drawnPoints: Vec3[] = [];
  private disposed = false;

  /** Throws when WebGL 2 is not available (three.js r170 needs it). */
  constructor(onChange: () => void, onLost: () => void) {
    this.canvas = document.createElement("canvas");
    const gl = this.canvas.getContext("webgl2", GL_OPTIONS);
    if (!gl) throw new Error("the browser gives this page no WebGL 2 context");
    this.rendererName = rendererName(gl);
    // No MSAA and Lambert shading: with a software GL MSAA and PBR shading cost more than
    // the rest of the page.
    this.renderer = new THREE.WebGLRenderer({ canvas: this.canvas, context: gl, antialias: false });
    this.renderer.setClearColor(BACKGROUND);
    this.canvas.addEventListener("webglcontextlost", (e) => {
      e.preventDefault();
      // dispose() gives the context up on purpose: that loss is no failure.
      if (!this.disposed) onLost();
    });

    this.camera.up.set(0, 0, 1);
    this.camera.position.set(2.0, -2.0, 1.4);
    this.controls = new OrbitControls(this.camera, this.canvas);
    this.controls.target.set(0, 0, 0.5);
    this.controls.update();
    this.controls.addEventListener("change", onChange);

    const scene = this.scene;
    scene.add(new THREE.HemisphereLight(0xffffff, 0x303040, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.8);
    sun.position.set(2, -3, 4);
    scene.add(sun);
    const grid = new THREE.GridHelper(2, 20, 0x444c56, 0x2a3038);
    grid.rotation.x = Math.PI / 2; // GridHelper lies in XZ; the floor is XY here.
    scene.add(grid);
    scene.add(new THREE.AxesHelper(0.3)); // BASE

    const cylGeo = new THREE.CylinderGeometry(1, 1, 1, 20, 1, true);
    this.sphGeo = new THREE.SphereGeometry(1, 20, 12);
    const armMat = new THREE.MeshLambertMaterial({ color: ARM_COLOR });
    const ghostMat = new THREE.MeshLambertMaterial({
      color: GHOST_COLOR, transparent: true, opacity: 0.3, depthWrite: false,
    });
    this.arm = new ArmModel(cylGeo, this.sphGeo, armMat);
    this.predicted = new ArmModel(cylGeo, this.sphGeo, ghostMat);
    scene.add(this.arm.group, this.predicted.group, this.motion, this.reference, this.obstacleGroup, this.sceneGroup);
    this.obstacleMat = new THREE.MeshLambertMaterial({ color: 0xff3030, transparent: true, opacity: 0.5, depthWrite: false });
    this.influenceMat = new THREE.MeshBasicMaterial({ color: 0xff3030, transparent: true, opacity: 0.1, depthWrite: false });
  }

  resize(level: Level): void {
    const w = this.canvas.clientWidth;
    const h = this.canvas.clientHeight;
    if (w === 0 || h === 0) return;
    this.renderer.setPixelRatio(level.pixelRatio);
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
  }

  /** Rebuilds the scene's meshes when the site reports another scene. */
  private setScene(scene: SceneMsg | null | undefined): void {
    const key = scene ? JSON.stringify(scene) : "";
    if (key === this.sceneKey) return;
    this.sceneKey = key;
    for (const m of this.sceneGroup.children) disposeTree(m);
    this.sceneGroup.clear();
    this.pivots = [];
    stats.sceneBodies = 0;
    if (!scene) return;
    const pivotOf = new Map<string, THREE.Group>();
    for (const j of scene.joints) {
      const pivot = new THREE.Group();
      pivot.position.set(...j.position);
      this.sceneGroup.add(pivot);
      pivotOf.set(j.name, pivot);
      this.pivots.push({ pivot, axis: new THREE.Vector3(...j.axis).normalize(), label: j.label });
    }
    for (const b of scene.bodies) {
      // Obstacles come with the telemetry, drawn with their spheres of influence.
      if (b.obstacle) continue;
      const mesh = new THREE.Mesh(bodyGeometry(b.shape, b.size), new THREE.MeshLambertMaterial({ color: bodyColor(b.name) }));
      const [w, x, y, z] = b.quat;
      mesh.quaternion.set(x, y, z, w);
      if (b.tag) mesh.add(tagMesh(b.tag, b.shape, b.size));
      const parent = pivotOf.get(b.joint);
      if (parent) {
        mesh.position.set(b.p[0] - parent.position.x, b.p[1] - parent.position.y, b.p[2] - parent.position.z);
        parent.add(mesh);
      } else {
        mesh.position.set(...b.p);
        this.sceneGroup.add(mesh);
      }
      stats.sceneBodies++;
    }
  }

  draw(t: TelemetryMsg | undefined, armMsg: ArmMsg | undefined, site: string, scene?: SceneMsg | null): void {
    this.setScene(scene);
    for (const { pivot, axis, label } of this.pivots) {
      const angle = t?.aux?.find((a) => a.name === label)?.value;
      pivot.quaternion.setFromAxisAngle(axis, typeof angle === "number" ? angle : 0);
    }
    const visible = !!t;
    this.arm.group.visible = visible;
    this.motion.visible = visible && !!t?.motion;
    if (!t) {
      this.reference.visible = this.predicted.group.visible = false;
      this.obstacleGroup.clear();
    } else {
      const radii = armMsg ? armMsg.links.map((l) => l.radius) : [];
      this.arm.update(t.points, radii);
      if (t.motion) setPose(this.motion, t.motion);
      this.reference.visible = !!t.reference;
      if (t.reference) setPose(this.reference, t.reference);
      this.predicted.group.visible = !!t.predicted;
      if (t.predicted) this.predicted.update(t.predicted.points, radii);
      // Obstacles are few (a handful of spheres): rebuilt each frame, sharing the geometry.
      this.obstacleGroup.clear();
      for (const o of t.obstacles) {
        const s = new THREE.Mesh(this.sphGeo, this.obstacleMat);
        s.position.set(...o.c);
        s.scale.setScalar(o.r);
        const inf = new THREE.Mesh(this.sphGeo, this.influenceMat);
        inf.position.set(...o.c);
        inf.scale.setScalar(o.r + o.influence);
        this.obstacleGroup.add(s, inf);
      }
      if (this.framedSite !== site && t.points.length > 1) {
        // Aim at the arm's middle once per site; after that the operator owns the camera.
        this.framedSite = site;
        const c = new THREE.Vector3();
        for (const p of t.points) c.add(new THREE.Vector3(...p));
        c.divideScalar(t.points.length);
        this.controls.target.copy(c);
        // From beside and behind the arm, as an operator stands: what it works on (a door, a
        // wall) lies beyond it, never in front of it.
        this.camera.position.set(c.x - 1.0, c.y - 2.0, c.z + 0.9);
        this.controls.update();
      }
    }
    this.renderer.render(this.scene, this.camera);
    this.drawnPoints = t?.points ?? [];
  }

  projection(): Projection {
    const r = this.canvas.getBoundingClientRect();
    return {
      canvasRect: { left: r.left, top: r.top, width: r.width, height: r.height },
      viewProjection: new THREE.Matrix4()
        .multiplyMatrices(this.camera.projectionMatrix, this.camera.matrixWorldInverse)
        .toArray(),
      armPoints: this.drawnPoints,
    };
  }

  dispose(): void {
    this.disposed = true;
    this.controls.dispose();
    this.renderer.dispose();
    // Gives the GPU process its context back now rather than at the next collection.
    this.renderer.forceContextLoss();
  }
}

/**
 * The arm without WebGL: the telemetry points drawn on a CPU-backed 2-D canvas in two
 * orthographic views side by side, the side view (x right, z up, seen from −y, as the 3-D
 * view's default camera) and the top view (x right, y up). Links are lines as wide as their
 * capsules, the predicted arm a translucent ghost, obstacles circles, the MOTION frame three
 * short axes. The scale is fitted to the site's arm once and only grows, so the picture
 * does not breathe with the motion.
 */
class FlatView implements View {
  readonly mode = "2d" as const;
  readonly canvas: HTMLCanvasElement;
  private readonly g: CanvasRenderingContext2D;
  private extent: { site: string; cx: number; cy: number; cz: number; half: number } | null = null;
  private side = { x: 0, y: 0, w: 1, h: 1 };
  private sideCentre: [number, number, number] = [0, 0, 1];
  private drawnPoints: Vec3[] = [];
  private ratio = 1;

  constructor() {
    this.canvas = document.createElement("canvas");
    const g = this.canvas.getContext("2d", { alpha: false, willReadFrequently: true });
    if (!g) throw new Error("no 2-D canvas");
    this.g = g;
  }

  resize(level: Level): void {
    const w = this.canvas.clientWidth;
    const h = this.canvas.clientHeight;
    if (w === 0 || h === 0) return;
    this.ratio = Math.min(level.pixelRatio, window.devicePixelRatio || 1);
    this.canvas.width = Math.round(w * this.ratio);
    this.canvas.height = Math.round(h * this.ratio);
  }

  /** Centre and half-size of the box shown [m]: the arm's points with room, at least 0.6 m. */
  private fit(site: string, pts: Vec3[]): void {
    if (pts.length === 0) return;
    let [x0, y0, z0] = [Infinity, Infinity, Infinity];
    let [x1, y1, z1] = [-Infinity, -Infinity, -Infinity];
    for (const [x, y, z] of pts) {
      x0 = Math.min(x0, x); y0 = Math.min(y0, y); z0 = Math.min(z0, z);
      x1 = Math.max(x1, x); y1 = Math.max(y1, y); z1 = Math.max(z1, z);
    }
    const e = this.extent;
    if (e && e.site === site) {
      // Grows only when the arm leaves the box.
      const inside = x0 >= e.cx - e.half && x1 <= e.cx + e.half && y0 >= e.cy - e.half && y1 <= e.cy + e.half &&
        z0 >= e.cz - e.half && z1 <= e.cz + e.half;
      if (inside) return;
      x0 = Math.min(x0, e.cx - e.half); x1 = Math.max(x1, e.cx + e.half);
      y0 = Math.min(y0, e.cy - e.half); y1 = Math.max(y1, e.cy + e.half);
      z0 = Math.min(z0, e.cz - e.half); z1 = Math.max(z1, e.cz + e.half);
    }
    const half = Math.max(0.6, 0.6 * Math.max(x1 - x0, y1 - y0, z1 - z0));
    this.extent = { site, cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, cz: (z0 + z1) / 2, half };
  }

  draw(t: TelemetryMsg | undefined, armMsg: ArmMsg | undefined, site: string): void {
    const g = this.g;
    const W = this.canvas.width;
    const H = this.canvas.height;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.fillStyle = css(BACKGROUND);
    g.fillRect(0, 0, W, H);
    this.drawnPoints = t?.points ?? [];
    if (!t || t.points.length === 0) return;
    const everything = [...t.points, ...(t.predicted?.points ?? [])];
    if (t.motion) everything.push(t.motion.p);
    this.fit(site, everything);
    const e = this.extent!;
    const r = this.ratio;
    g.setTransform(r, 0, 0, r, 0, 0);
    const cw = W / r;
    const ch = H / r;
    // Two panels side by side, or one above the other, whichever draws the arm larger.
    const wide = Math.min(cw / 2, ch) >= Math.min(cw, ch / 2);
    const pw = wide ? cw / 2 : cw;
    const ph = wide ? ch : ch / 2;
    const size = Math.max(40, Math.min(pw, ph) - 16);
    const panels = [
      { name: "side (x right, z up)", ox: (pw - size) / 2, oy: (ph - size) / 2, u: 0, v: 2, cu: e.cx, cv: e.cz },
      { name: "top (x right, y up)", ox: (wide ? pw : 0) + (pw - size) / 2, oy: (wide ? 0 : ph) + (ph - size) / 2, u: 0, v: 1, cu: e.cx, cv: e.cy },
    ];
    const scale = size / (2 * e.half); // px per m
    const radii = armMsg ? armMsg.links.map((l) => l.radius) : [];
    for (const p of panels) {
      const X = (q: Vec3) => p.ox + size / 2 + (q[p.u] - p.cu) * scale;
      const Yp = (q: Vec3) => p.oy + size / 2 - (q[p.v] - p.cv) * scale;
      g.strokeStyle = "#2a3038";
      g.lineWidth = 1;
      g.strokeRect(p.ox, p.oy, size, size);
      // A grid every 0.1 m and the floor (z = 0) or the base axes.
      g.beginPath();
      const step = 0.1;
      const lo = (c: number) => Math.ceil((c - e.half) / step) * step;
      for (let a = lo(p.cu); a <= p.cu + e.half; a += step) {
        const x = p.ox + size / 2 + (a - p.cu) * scale;
        g.moveTo(x, p.oy); g.lineTo(x, p.oy + size);
      }
      for (let b = lo(p.cv); b <= p.cv + e.half; b += step) {
        const y = p.oy + size / 2 - (b - p.cv) * scale;
        g.moveTo(p.ox, y); g.lineTo(p.ox + size, y);
      }
      g.stroke();
      g.strokeStyle = "#444c56";
      g.beginPath();
      const origin = Yp([0, 0, 0]);
      g.moveTo(p.ox, origin); g.lineTo(p.ox + size, origin);
      g.stroke();
      g.save();
      g.beginPath();
      g.rect(p.ox, p.oy, size, size);
      g.clip();
      for (const o of t.obstacles) {
        g.fillStyle = "rgba(255,48,48,0.1)";
        g.beginPath(); g.arc(X(o.c), Yp(o.c), (o.r + o.influence) * scale, 0, 2 * Math.PI); g.fill();
        g.fillStyle = "rgba(255,48,48,0.5)";
        g.beginPath(); g.arc(X(o.c), Yp(o.c), o.r * scale, 0, 2 * Math.PI); g.fill();
      }
      const links = (pts: Vec3[], color: string) => {
        g.strokeStyle = color;
        g.lineCap = "round";
        for (let i = 0; i + 1 < pts.length; i++) {
          g.lineWidth = Math.max(2, 2 * (radii[i] ?? 0.04) * scale);
          g.beginPath();
          g.moveTo(X(pts[i]), Yp(pts[i]));
          g.lineTo(X(pts[i + 1]), Yp(pts[i + 1]));
          g.stroke();
        }
      };
      if (t.predicted) links(t.predicted.points, css(GHOST_COLOR, 0.3));
      links(t.points, css(ARM_COLOR));
      g.fillStyle = "#15181c";
      for (const q of t.points) {
        g.beginPath(); g.arc(X(q), Yp(q), 2, 0, 2 * Math.PI); g.fill();
      }
      const axes = (pose: Pose | null, alpha: number) => {
        if (!pose) return;
        const [w, x, y, z] = pose.quat;
        // The rotation matrix's columns: the frame's axes in BASE.
        const cols: Vec3[] = [
          [1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)],
          [2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)],
          [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)],
        ];
        ["255,64,64", "64,220,64", "64,128,255"].forEach((rgb, k) => {
          const tip: Vec3 = [pose.p[0] + 0.15 * cols[k][0], pose.p[1] + 0.15 * cols[k][1], pose.p[2] + 0.15 * cols[k][2]];
          g.strokeStyle = `rgba(${rgb},${alpha})`;
          g.lineWidth = 2;
          g.beginPath(); g.moveTo(X(pose.p), Yp(pose.p)); g.lineTo(X(tip), Yp(tip)); g.stroke();
        });
      };
      axes(t.reference, 0.35);
      axes(t.motion, 1);
      g.restore();
      g.fillStyle = "#8a96a3";
      g.font = "11px system-ui, sans-serif";
      g.fillText(p.name, p.ox + 4, p.oy + size - 6);
    }
    // The side view's panel (in CSS pixels from the canvas's corner) and its centre.
    const side = panels[0];
    this.side = { x: side.ox, y: side.oy, w: size, h: size };
    this.sideCentre = [side.cu, side.cv, e.half];
  }

  /** The side view's mapping as a view-projection matrix (orthographic, column-major), so a
   *  test projects points exactly as it does with the 3-D camera's. */
  projection(): Projection {
    const [cu, cv, half] = this.sideCentre;
    const m = new Array<number>(16).fill(0);
    m[0] = 1 / half; m[12] = -cu / half; // x → clip x
    m[9] = 1 / half; m[13] = -cv / half; // z → clip y
    m[15] = 1;
    const r = this.canvas.getBoundingClientRect();
    return {
      canvasRect: { left: r.left + this.side.x, top: r.top + this.side.y, width: this.side.w, height: this.side.h },
      viewProjection: m,
      armPoints: this.drawnPoints,
    };
  }

  dispose(): void {}
}

/** The emulator a software renderer string names, for the note (the whole is its tooltip). */
function shortRenderer(name: string): string {
  const known = /swiftshader|llvmpipe|softpipe|lavapipe/i.exec(name);
  return known ? known[0] : name.slice(0, 40);
}

export function mountScene(root: HTMLElement, store: Store): void {
  THREE.Object3D.DEFAULT_UP.set(0, 0, 1);
  const title = el("h2", { text: "arm" });
  const legend = el("div", {
    class: "legend",
    text: "orange: arm · ghost: predicted arm · axes: MOTION frame (faint: reference) · red spheres: obstacles (faint: influence)",
  });
  const info = el("div", { class: "dim", id: "scene-info" });
  const noteText = el("span", { id: "scene-render-note" });
  const choiceSel = el("select", { id: "scene-render-choice", title: "how the arm is drawn" },
    el("option", { value: "auto", text: "auto" }),
    el("option", { value: "webgl", text: "3-D" }),
    el("option", { value: "webgl-reduced", text: "3-D, reduced" }),
    el("option", { value: "2d", text: "2-D" }));
  const note = el("div", { class: "render-note" }, noteText, choiceSel);
  const holder = el("div", { class: "scene-holder" });
  root.append(title, holder, info, note, legend);

  const all = levels(window.devicePixelRatio || 1);
  let lastRender = 0;
  let renders = 0;
  const drawnNow = () => {
    const armMsg = store.arms.get(store.activeSite);
    return drawnNumbers(store.telemetry.get(store.activeSite), armMsg ? armMsg.links.map((l) => l.radius) : []);
  };
  function drawNow(now: number): void {
    if (!view) return;
    dirty = false;
    lastRender = now;
    drawn = drawnNow();
    view.draw(store.telemetry.get(store.activeSite), store.arms.get(store.activeSite), store.activeSite,
      store.sites.get(store.activeSite)?.scene);
    stats.sceneRenders++;
    renders++;
  }
  let view: View | null = null;
  let webglFailure = ""; // why WebGL cannot be used, once it failed
  let software = false;
  let rendererLabel = "";
  let dirty = true;
  let drawn: number[] = [];
  let choice: Choice = "auto";
  let chooser: LevelChooser;

  const level = (): Level => all[chooser.level];

  /** Replaces the view with one of `mode` (2-D when WebGL fails), keeping the canvas's id. */
  const makeView = (mode: "webgl" | "2d"): void => {
    view?.dispose();
    view = null;
    if (mode === "webgl" && !webglFailure) {
      try {
        const v = new WebGLView(() => (dirty = true), () => {
          webglFailure = "the WebGL context was lost";
          chooser = new LevelChooser(LEVEL_2D, LEVEL_2D, performance.now(), webglFailure);
          switchTo(LEVEL_2D);
        });
        view = v;
        rendererLabel = v.rendererName;
        software = isSoftwareRenderer(v.rendererName);
      } catch (e) {
        webglFailure = `no WebGL (${(e as Error).message})`;
      }
    }
    view ??= new FlatView();
    view.canvas.id = "scene-canvas";
    holder.replaceChildren(view.canvas);
    resizeObserver.disconnect();
    resizeObserver.observe(view.canvas);
    sceneStats.renderer = view.mode === "webgl" ? rendererLabel : "";
    dirty = true;
  };

  const resize = () => {
    if (!view) return;
    view.resize(level());
    dirty = true;
  };
  const resizeObserver = new ResizeObserver(resize);

  const describe = () => {
    const l = level();
    const mode: RenderMode = view?.mode === "2d" ? "2d" : l.mode;
    sceneStats.renderMode = mode;
    const why = webglFailure
      ? `${webglFailure}: a 2-D drawing of the arm (side and top views)`
      : `${l.label}${software ? ` — software WebGL (${shortRenderer(rendererLabel)})` : ""}` +
        (choice === "auto" && chooser.changes > 0 ? ` — ${chooser.reason}` : choice !== "auto" ? " — chosen here" : "");
    if (noteText.textContent !== why) noteText.textContent = why;
    const title = rendererLabel ? `WebGL renderer: ${rendererLabel}` : "no WebGL";
    if (noteText.title !== title) noteText.title = title;
    note.classList.toggle("fallback", mode !== "webgl");
    sceneStats.renderBudget = { level: chooser.level, label: l.label, choice, reason: chooser.reason, changes: chooser.changes, fps: chooser.fps.slice(-8) };
  };

  /** Moves to a level, rebuilding the view when it changes between WebGL and 2-D, and
   *  draws it at once (a new canvas is blank until drawn). */
  const switchTo = (index: number) => {
    const want = all[index].mode === "2d" || webglFailure ? "2d" : "webgl";
    if (!view || view.mode !== want) makeView(want);
    resize();
    describe();
    drawNow(performance.now());
  };

  // First a WebGL view, if the browser gives one; its renderer decides where the budget
  // starts: a software GL at the reduced level, never offered the full one.
  makeView("webgl");
  const now0 = performance.now();
  if (webglFailure) chooser = new LevelChooser(LEVEL_2D, LEVEL_2D, now0, webglFailure);
  else if (software) chooser = new LevelChooser(1, LEVEL_2D, now0, `software WebGL: ${rendererLabel}`);
  else chooser = new LevelChooser(0, LEVEL_2D, now0, "WebGL");
  switchTo(chooser.level);

  // The operator's choice; "auto" starts afresh from the first level.
  choiceSel.addEventListener("change", () => {
    choice = choiceSel.value as Choice;
    const index = webglFailure || choice === "2d" ? LEVEL_2D
      : choice === "webgl" ? 0 : choice === "webgl-reduced" ? 1 : chooser.floor;
    chooser.set(index, performance.now(), choice === "auto" ? "automatic again" : `chosen: ${choice}`);
    switchTo(index);
  });

  // The page's frame rate, once a second: the automatic choice steps the view down when the
  // page no longer gets the frames the plots need, and probes back up later.
  let rendersAt = performance.now();
  meterFrames((fps, now) => {
    sceneStats.frameHz = fps;
    sceneStats.sceneHz = (renders * 1000) / Math.max(1, now - rendersAt);
    renders = 0;
    rendersAt = now;
    if (choice === "auto" && chooser.sample(fps, now)) switchTo(chooser.level);
    describe();
  });

  // A redraw only when the picture changes: a still arm (an idle site, a held pose) sends
  // the same numbers 60 times a second, and on a software GL every draw holds the page's
  // main thread (the frame waits for the canvas to be read back for the compositor).
  store.on("telemetry", (site) => {
    if (dirty || site !== store.activeSite) return;
    dirty = !sameNumbers(drawnNow(), drawn);
  });
  store.on("arm", (site) => (dirty ||= site === store.activeSite));
  store.on("active", () => (dirty = true));

  // The readout at 5 Hz, whether or not the picture changed: readable, and no text layout in
  // every frame.
  const readout = () => {
    const t = store.telemetry.get(store.activeSite);
    // Older than the store's staleness rule, the view is greyed and says for how long.
    const age = store.telemetryAge(store.activeSite);
    const stale = !!t && !store.live(store.activeSite);
    root.classList.toggle("stale", stale);
    let text: string;
    if (!t) {
      text = store.activeSite ? `no telemetry from ${store.activeSite} yet` : "no site";
    } else if (stale) {
      text = `${store.activeSite} · ${ageLabel(age)} · last: ${t.state}, cycle ${t.cycle}`;
    } else {
      const armMsg = store.arms.get(store.activeSite);
      const where = t.motion ? t.motion.p.map((v) => v.toFixed(3)).join(" ") + " m" : "unknown";
      text = `${store.activeSite}${armMsg ? ` (${armMsg.name})` : ""} · ${t.state} · MOTION ${where}` +
        ` · cycle ${t.cycle}`;
    }
    if (info.textContent !== text) info.textContent = text;
  };
  setInterval(readout, 200);

  // For the browser test, on demand (a layout read per frame would cost every frame): the
  // canvas's place, the camera's view-projection matrix and the points last drawn, so the
  // test can project the arm to pixels itself. In 2-D: the side view's panel and mapping.
  stats.sceneProjection = () => (view ? view.projection() : null);

  const frame = (now: number) => {
    requestAnimationFrame(frame);
    if (!view || !dirty || now - lastRender < 1000 / level().maxHz - 1) return;
    drawNow(now);
  };
  requestAnimationFrame(frame);
}
