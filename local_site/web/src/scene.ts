// The 3-D view of the active site: the arm as capsules between consecutive telemetry points
// with the arm message's link radii, the MOTION frame, the reference pose (ghost axes), the
// obstacles (sphere and sphere of influence) and, on a delayed link, the predicted arm as a
// ghost. Z is up, as in the robot's BASE frame. Renders at most once per animation frame and
// only when something changed.
import * as THREE from "three";
import { OrbitControls } from "three/examples/jsm/controls/OrbitControls.js";
import { el, stats, type Store } from "./store";
import type { Pose, TelemetryMsg, Vec3 } from "./protocol";

/** The arm's colour; the browser test looks for it in the screenshot. */
export const ARM_COLOR = 0xff8c1a;
const BACKGROUND = 0x15181c;
const Y = new THREE.Vector3(0, 1, 0);

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

/** Whether WebGL runs on the CPU (SwiftShader, llvmpipe): then the view costs the page. */
function softwareGl(renderer: THREE.WebGLRenderer): boolean {
  const gl = renderer.getContext();
  const info = gl.getExtension("WEBGL_debug_renderer_info");
  const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  return /swiftshader|llvmpipe|softpipe|software/i.test(name);
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

export function mountScene(root: HTMLElement, store: Store): void {
  THREE.Object3D.DEFAULT_UP.set(0, 0, 1);
  const title = el("h2", { text: "arm" });
  const legend = el("div", {
    class: "legend",
    text: "orange: arm · ghost: predicted arm · axes: MOTION frame (faint: reference) · red spheres: obstacles (faint: influence)",
  });
  const info = el("div", { class: "dim", id: "scene-info" });
  // No MSAA and Lambert shading: with a software GL (SwiftShader in headless tests, remote
  // desktops without a GPU) MSAA and PBR shading cost more than the rest of the page.
  const renderer = new THREE.WebGLRenderer({ antialias: false });
  const software = softwareGl(renderer);
  // A software GL also draws half the resolution (a quarter of the pixels): on two busy
  // cores the full-size 3-D view alone held the page below the plots' 30 Hz.
  renderer.setPixelRatio(software ? 0.5 : Math.min(window.devicePixelRatio, 2));
  renderer.setClearColor(BACKGROUND);
  const canvas = renderer.domElement;
  canvas.id = "scene-canvas";
  root.append(title, canvas, info, legend);

  const scene = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(45, 1, 0.01, 50);
  camera.up.set(0, 0, 1);
  camera.position.set(2.0, -2.0, 1.4);
  const controls = new OrbitControls(camera, canvas);
  controls.target.set(0, 0, 0.5);
  controls.update();

  scene.add(new THREE.HemisphereLight(0xffffff, 0x303040, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.8);
  sun.position.set(2, -3, 4);
  scene.add(sun);
  const grid = new THREE.GridHelper(2, 20, 0x444c56, 0x2a3038);
  grid.rotation.x = Math.PI / 2; // GridHelper lies in XZ; the floor is XY here.
  scene.add(grid);
  scene.add(new THREE.AxesHelper(0.3)); // BASE

  const cylGeo = new THREE.CylinderGeometry(1, 1, 1, 20, 1, true);
  const sphGeo = new THREE.SphereGeometry(1, 20, 12);
  const armMat = new THREE.MeshLambertMaterial({ color: ARM_COLOR });
  const ghostMat = new THREE.MeshLambertMaterial({
    color: 0x7fb8ff, transparent: true, opacity: 0.3, depthWrite: false,
  });
  const arm = new ArmModel(cylGeo, sphGeo, armMat);
  const predicted = new ArmModel(cylGeo, sphGeo, ghostMat);
  scene.add(arm.group, predicted.group);
  const motion = new THREE.AxesHelper(0.15);
  const reference = ghostAxes(0.15);
  scene.add(motion, reference);
  const obstacleGroup = new THREE.Group();
  scene.add(obstacleGroup);
  const obstacleMat = new THREE.MeshLambertMaterial({ color: 0xff3030, transparent: true, opacity: 0.5, depthWrite: false });
  const influenceMat = new THREE.MeshBasicMaterial({ color: 0xff3030, transparent: true, opacity: 0.1, depthWrite: false });

  let dirty = true;
  let framedSite = "";
  const resize = () => {
    const w = canvas.clientWidth;
    const h = canvas.clientHeight;
    if (w === 0 || h === 0) return;
    renderer.setSize(w, h, false);
    camera.aspect = w / h;
    camera.updateProjectionMatrix();
    dirty = true;
  };
  new ResizeObserver(resize).observe(canvas);
  controls.addEventListener("change", () => (dirty = true));
  // A redraw only when the picture changes: a still arm (an idle site, a held pose) sends
  // the same numbers 60 times a second, and on a software GL every draw holds the page's
  // main thread (the frame waits for the canvas to be read back for the compositor).
  let drawn: number[] = [];
  const drawnNow = () => {
    const armMsg = store.arms.get(store.activeSite);
    return drawnNumbers(store.telemetry.get(store.activeSite), armMsg ? armMsg.links.map((l) => l.radius) : []);
  };
  store.on("telemetry", (site) => {
    if (dirty || site !== store.activeSite) return;
    dirty = !sameNumbers(drawnNow(), drawn);
  });
  store.on("arm", (site) => (dirty ||= site === store.activeSite));
  store.on("active", () => (dirty = true));

  const update = () => {
    const t = store.telemetry.get(store.activeSite);
    const armMsg = store.arms.get(store.activeSite);
    const visible = !!t;
    arm.group.visible = visible;
    motion.visible = visible && !!t?.motion;
    if (!t) {
      info.textContent = store.activeSite ? `no telemetry from ${store.activeSite} yet` : "no site";
      reference.visible = predicted.group.visible = false;
      obstacleGroup.clear();
      return;
    }
    const radii = armMsg ? armMsg.links.map((l) => l.radius) : [];
    arm.update(t.points, radii);
    if (t.motion) setPose(motion, t.motion);
    reference.visible = !!t.reference;
    if (t.reference) setPose(reference, t.reference);
    predicted.group.visible = !!t.predicted;
    if (t.predicted) predicted.update(t.predicted.points, radii);
    // Obstacles are few (a handful of spheres): rebuilt each frame, sharing the geometry.
    obstacleGroup.clear();
    for (const o of t.obstacles) {
      const s = new THREE.Mesh(sphGeo, obstacleMat);
      s.position.set(...o.c);
      s.scale.setScalar(o.r);
      const inf = new THREE.Mesh(sphGeo, influenceMat);
      inf.position.set(...o.c);
      inf.scale.setScalar(o.r + o.influence);
      obstacleGroup.add(s, inf);
    }
    if (framedSite !== store.activeSite && t.points.length > 1) {
      // Aim at the arm's middle once per site; after that the operator owns the camera.
      framedSite = store.activeSite;
      const c = new THREE.Vector3();
      for (const p of t.points) c.add(new THREE.Vector3(...p));
      c.divideScalar(t.points.length);
      controls.target.copy(c);
      camera.position.set(c.x + 1.8, c.y - 1.8, c.z + 0.9);
      controls.update();
    }
  };

  // The readout at 5 Hz, whether or not the picture changed: readable, and no text layout in
  // every frame.
  const readout = () => {
    const t = store.telemetry.get(store.activeSite);
    if (!t) return;
    const armMsg = store.arms.get(store.activeSite);
    const where = t.motion ? t.motion.p.map((v) => v.toFixed(3)).join(" ") + " m" : "unknown";
    const text =
      `${store.activeSite}${armMsg ? ` (${armMsg.name})` : ""} · ${t.state} · MOTION ${where}` +
      ` · cycle ${t.cycle}`;
    if (info.textContent !== text) info.textContent = text;
  };
  setInterval(readout, 200);

  // For the browser test, on demand (a layout read per frame would cost every frame): the
  // canvas's place, the camera's view-projection matrix and the points last drawn, so the
  // test can project the arm to pixels itself.
  let drawnPoints: Vec3[] = [];
  stats.sceneProjection = () => {
    const r = canvas.getBoundingClientRect();
    return {
      canvasRect: { left: r.left, top: r.top, width: r.width, height: r.height },
      viewProjection: new THREE.Matrix4()
        .multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse)
        .toArray(),
      armPoints: drawnPoints,
    };
  };

  // On a software GL (SwiftShader) each draw holds the main thread for milliseconds, so the
  // view is drawn at most every 100 ms (10 Hz): the plots, whose numbers the operator reads,
  // and the gamepad's timer keep their rates on a busy CPU. A GPU draws every update.
  const minIntervalMs = software ? 100 : 0;
  let lastRender = 0;
  const frame = (now: number) => {
    requestAnimationFrame(frame);
    if (!dirty || now - lastRender < minIntervalMs) return;
    dirty = false;
    lastRender = now;
    update();
    drawn = drawnNow();
    renderer.render(scene, camera);
    stats.sceneRenders++;
    drawnPoints = store.telemetry.get(store.activeSite)?.points ?? [];
  };
  resize();
  requestAnimationFrame(frame);
}
