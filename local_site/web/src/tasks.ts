// The task library: the tasks stored on the active site, the tasks shipped with tether and
// the task commands (with a form for their arguments), each opened in the editor to be
// previewed in the site's scene, diffed against the stored revision, uploaded and started;
// and one parameter of the running task set. Errors are shown at their place: a field's
// error marks the editor's line holding the field, a text that does not parse marks the line
// the parser stopped at, and each message is listed. (Start, stop, reset and recovery also
// sit beside the 3-D view: run.ts.)
import type { Connection } from "./connection";
import { RequestError, type FieldError, type ReplyMsg } from "./protocol";
import { el, type StoredTask, type Store } from "./store";

interface PathSegment {
  name: string;
  index: number;
}

/** "behaviours[2].stiffness" → behaviours #2, stiffness; null when it is not a field path. */
export function parseFieldPath(path: string): PathSegment[] | null {
  const segs: PathSegment[] = [];
  for (const part of path.split(".")) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$/.exec(part);
    if (!m) return null;
    segs.push({ name: m[1], index: m[2] ? Number(m[2]) : 0 });
  }
  return segs.length ? segs : null;
}

/**
 * The 0-based line of `text` that holds the field at `path`, walking the path's segments in
 * order (the k-th occurrence for a repeated field's index k). When a segment is absent (a
 * field left at its default), the line of the deepest segment found is the closest place;
 * -1 when not even the first is there.
 */
export function lineOfField(text: string, path: string): number {
  const segs = parseFieldPath(path);
  if (!segs) return -1;
  let offset = 0;
  let found = -1;
  for (const seg of segs) {
    // A textproto field: `name:` or `name {` or `name <`, not part of a longer identifier.
    const re = new RegExp(`(^|[^A-Za-z0-9_])${seg.name}\\s*[:{<]`, "gm");
    re.lastIndex = offset;
    let m: RegExpExecArray | null = null;
    for (let k = 0; k <= seg.index; k++) {
      m = re.exec(text);
      if (!m) break;
    }
    if (!m) break;
    found = m.index + m[1].length;
    offset = found + seg.name.length;
  }
  if (found < 0) return -1;
  return text.slice(0, found).split("\n").length - 1;
}

function fmt(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

/** The preview's result: its text report, and the breach it ran into, if any. */
function fmtPreview(p: unknown): string {
  if (p && typeof p === "object" && "text" in p) {
    const r = p as { text: string; breach?: string | null };
    return r.text + (r.breach ? `\nbreach in the preview: ${r.breach}` : "");
  }
  return fmt(p);
}

interface CommandArgument {
  name: string;
  help?: string;
  unit?: string;
  kind?: "number" | "choice";
  allowed?: string;
  default?: string;
  required?: boolean;
  choices?: { name: string; help?: string }[];
}

interface Command {
  name: string;
  summary: string;
  scene?: string;
  arguments: CommandArgument[];
}

interface ShippedTask {
  name: string;
  file?: string;
  summary?: string;
  scene?: string;
  text?: string;
  error?: string;
}

const SCENES = ["free", "door", "wall", "obstacles", "proximity", "target"];

/** One command argument as a line: name [unit], what it allows, its default, its help. */
function fmtArgument(a: unknown): string {
  if (typeof a !== "object" || a === null) return String(a);
  const x = a as CommandArgument;
  const parts = [`${x.name}${x.unit ? ` [${x.unit}]` : ""}`];
  if (x.allowed) parts.push(x.allowed);
  if (x.required) parts.push("required");
  else if (x.default) parts.push(`default ${x.default}`);
  return parts.join(", ") + (x.help ? ` — ${x.help}` : "");
}

export function mountTasks(root: HTMLElement, conn: Connection, store: Store): void {
  const storedList = el("ul", { id: "library-stored" });
  const shippedList = el("ul", { id: "library-shipped" });
  const commandsBody = el("div", { id: "commands" });
  const refresh = el("button", { text: "refresh", id: "tasks-refresh" });
  const storedTitle = el("h3", { text: "on the site" });
  const nameInput = el("input", { id: "task-name", title: "the task's name on the site", size: "16" });
  const scene = el("select", { id: "preview-scene", title: "the scene the preview runs in" },
    el("option", { value: "", text: "the site's scene" }), ...SCENES.map((n) => el("option", { value: n, text: n })));
  const origin = el("span", { class: "dim", id: "task-origin" });
  const gutter = el("div", { class: "gutter", id: "editor-gutter" });
  const textarea = el("textarea", { id: "task-text", spellcheck: "false", wrap: "off" });
  const editor = el("div", { class: "editor" }, gutter, textarea);
  const btn = (id: string, text: string) => el("button", { id, text });
  const validateBtn = btn("task-validate", "validate (preview)");
  const diffBtn = btn("task-diff", "diff against stored");
  const uploadBtn = btn("task-upload", "upload");
  const uploadStartBtn = btn("task-upload-start", "upload and start");
  const errorsList = el("ul", { class: "errors", id: "task-errors" });
  const result = el("div", { class: "msg", id: "task-result" });
  const paramPath = el("input", { id: "param-path", title: "a field path, e.g. force_control.reference_wrench.torque.x", size: "28" });
  const paramValue = el("input", { id: "param-value", title: "its new value", size: "8" });
  const paramBtn = btn("param-set", "set parameter");

  root.append(
    el("h2", { text: "task library" }),
    el(
      "div",
      { class: "task-grid" },
      el("div", { class: "task-list" },
        el("div", { class: "row" }, storedTitle, refresh), storedList,
        el("h3", { text: "shipped with tether" }), shippedList,
        el("h3", { text: "task commands" }), commandsBody),
      el(
        "div",
        { class: "task-edit" },
        el("div", { class: "row" }, el("label", { text: "name " }, nameInput), origin),
        el("div", { class: "row" }, validateBtn, el("label", { text: "in " }, scene), diffBtn, uploadBtn, uploadStartBtn),
        editor,
        errorsList,
        result,
        el(
          "div",
          { class: "row" },
          el("span", { class: "dim", text: "running task:" }),
          el("label", { text: "field " }, paramPath),
          el("label", { text: "value " }, paramValue),
          paramBtn,
        ),
      ),
    ),
  );

  let stored: { task: string; text: string } | null = null;
  let errorLines = new Set<number>();

  // The gutter holds one number per line; the textarea grows to its content so the
  // container scrolls both together. Both use the same font and line height (style.css).
  const layout = () => {
    const n = textarea.value.split("\n").length;
    const nums: HTMLElement[] = [];
    for (let i = 0; i < n; i++) {
      nums.push(el("div", { class: errorLines.has(i) ? "err" : "", "data-line": String(i + 1), text: String(i + 1) }));
    }
    gutter.replaceChildren(...nums);
    textarea.style.height = "auto";
    textarea.style.height = `${textarea.scrollHeight}px`;
  };
  textarea.addEventListener("input", () => {
    // Edited text no longer matches the errors' lines.
    errorLines = new Set();
    layout();
  });

  const selectLine = (line: number) => {
    const lines = textarea.value.split("\n");
    const start = lines.slice(0, line).reduce((a, l) => a + l.length + 1, 0);
    textarea.focus();
    textarea.setSelectionRange(start, start + (lines[line]?.length ?? 0));
  };

  const showErrors = (errors: FieldError[], fallback: string) => {
    errorLines = new Set();
    const items: HTMLElement[] = [];
    const shown = errors.length ? errors : [{ field: "", message: fallback }];
    for (const e of shown) {
      // The parser's own place first (a syntax error), else the line holding the field.
      const line = typeof e.line === "number" && e.line > 0 ? e.line - 1 : e.field ? lineOfField(textarea.value, e.field) : -1;
      if (line >= 0) errorLines.add(line);
      const li = el("li", { "data-field": e.field, "data-line": line >= 0 ? String(line + 1) : "" });
      if (e.field) li.append(el("code", { text: e.field }), " ");
      if (line >= 0) li.append(el("span", { class: "dim", text: `(line ${line + 1}${e.column ? `, column ${e.column}` : ""}) ` }));
      li.append(e.message);
      if (line >= 0) li.addEventListener("click", () => selectLine(line));
      items.push(li);
    }
    errorsList.replaceChildren(...items);
    layout();
  };
  const clearErrors = () => {
    errorLines = new Set();
    errorsList.replaceChildren();
    layout();
  };

  /** Runs a request, showing its outcome; errors with fields go to the editor. */
  const run = async (what: string, msg: Record<string, unknown>, onOk?: (r: ReplyMsg) => string) => {
    result.textContent = `${what}…`;
    result.className = "msg dim";
    try {
      const r = await conn.request(msg);
      errorsList.replaceChildren();
      errorLines = new Set();
      layout();
      result.textContent = onOk ? onOk(r) : `${what}: done`;
      result.className = "msg ok";
      return r;
    } catch (e) {
      const err = e as Error;
      result.textContent = `${what}: ${err.message}`;
      result.className = "msg bad";
      if (err instanceof RequestError && err.errors.length) showErrors(err.errors, err.message);
      return null;
    }
  };

  /** Puts a text in the editor, with where it came from. */
  const open = (name: string, text: string, from: string, storedText: string | null, previewScene = "") => {
    stored = storedText === null ? null : { task: name, text: storedText };
    nameInput.value = name;
    textarea.value = text;
    origin.textContent = from;
    scene.value = SCENES.includes(previewScene) ? previewScene : "";
    clearErrors();
    for (const ul of [storedList, shippedList]) {
      for (const li of ul.children) li.classList.toggle("sel", (li as HTMLElement).dataset.task === name && ul === (storedText === null ? shippedList : storedList));
    }
  };

  const loadList = async () => {
    const site = store.activeSite;
    if (!site) return;
    storedTitle.textContent = `on ${site}`;
    try {
      const r = await conn.request({ type: "list_tasks", site });
      const tasks = (r.tasks ?? []) as StoredTask[];
      store.setStoredTasks(site, tasks);
      storedList.replaceChildren(
        ...tasks.map((t) => {
          const li = el("li", { "data-task": t.name, title: t.summary, class: stored?.task === t.name ? "sel" : "" },
            el("span", { text: t.name }), el("span", { class: "dim", text: ` r${t.revision}` }));
          li.addEventListener("click", () => void openStored(t.name));
          return li;
        }),
      );
      if (!tasks.length) storedList.replaceChildren(el("li", { class: "dim", text: "none yet: upload one" }));
    } catch (e) {
      storedList.replaceChildren(el("li", { class: "bad", text: (e as Error).message }));
    }
  };
  store.reloadTasks = () => void loadList();

  const openStored = async (task: string) => {
    const r = await run(`get ${task}`, { type: "get_task", site: store.activeSite, task }, () => `${task} loaded from ${store.activeSite}`);
    if (!r) return;
    open(task, String(r.text ?? ""), `stored on ${store.activeSite}`, String(r.text ?? ""));
  };

  const loadShipped = async () => {
    try {
      const r = await conn.request({ type: "library" });
      const tasks = (r.tasks ?? []) as ShippedTask[];
      shippedList.replaceChildren(
        ...tasks.map((t) => {
          const li = el("li", { "data-task": t.name, title: t.error ?? t.summary ?? "" },
            el("span", { text: t.name }), el("span", { class: t.error ? "bad" : "dim", text: t.error ? " (does not parse)" : t.scene ? ` ${t.scene}` : "" }));
          li.addEventListener("click", () => {
            open(t.name, t.text ?? "", `shipped: ${t.file ?? t.name}${t.scene ? `, for the ${t.scene} scene` : ""}`, null, t.scene);
            result.textContent = t.error ? `${t.name}: ${t.error}` : `${t.name} loaded; preview it, upload it, start it`;
            result.className = t.error ? "msg bad" : "msg dim";
          });
          return li;
        }),
      );
    } catch (e) {
      shippedList.replaceChildren(el("li", { class: "bad", text: (e as Error).message }));
    }
  };

  const taskName = () => nameInput.value.trim() || stored?.task || "";

  refresh.addEventListener("click", () => void loadList());
  validateBtn.addEventListener("click", () => {
    const msg: Record<string, unknown> = { type: "validate", site: store.activeSite, text: textarea.value };
    if (scene.value) msg.scene = scene.value;
    void run("validate", msg, (r) =>
      `valid${r.preview !== undefined ? `; preview in the ${String(r.scene ?? "site's")} scene:\n${fmtPreview(r.preview)}` : ""}`);
  });
  diffBtn.addEventListener("click", () =>
    void run("diff", { type: "diff", site: store.activeSite, task: taskName(), text: textarea.value }, (r) => {
      const diff = (r.diff ?? []) as { field: string; old: unknown; new: unknown }[];
      if (!diff.length) return "no difference from the stored revision";
      return diff.map((d) => `${d.field}: ${fmt(d.old)} → ${fmt(d.new)}`).join("\n");
    }),
  );
  const upload = async (): Promise<string | null> => {
    const task = taskName();
    const r = await run("upload", { type: "upload", site: store.activeSite, task, text: textarea.value, replace: true }, (r) =>
      `uploaded ${task} to ${store.activeSite}${r.revision !== undefined ? ` as revision ${String(r.revision)}` : ""}`);
    if (!r) return null;
    stored = { task, text: textarea.value };
    origin.textContent = `stored on ${store.activeSite}`;
    store.pickTask(task);
    void loadList();
    return task;
  };
  uploadBtn.addEventListener("click", () => void upload());
  uploadStartBtn.addEventListener("click", async () => {
    const task = await upload();
    if (!task) return;
    await run(`start ${task}`, { type: "start", site: store.activeSite, task }, (r) => `uploaded and started ${task} as #${String(r.task_id)}`);
  });
  paramBtn.addEventListener("click", () =>
    void run("set parameter", { type: "set_parameter", site: store.activeSite, path: paramPath.value.trim(), value: paramValue.value.trim() },
      () => `${paramPath.value.trim()} = ${paramValue.value.trim()} sent to the running task`),
  );

  /** A command's form: one input per argument (a choice as a list), then "open in editor". */
  const commandForm = (c: Command): HTMLElement => {
    const inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
    const fields = c.arguments.map((a) => {
      let input: HTMLInputElement | HTMLSelectElement;
      if (a.kind === "choice" && a.choices?.length) {
        input = el("select", { "data-arg": a.name }, ...a.choices.map((ch) => el("option", { value: ch.name, text: ch.name, title: ch.help ?? "" })));
        if (a.default) input.value = a.default;
      } else {
        input = el("input", { "data-arg": a.name, size: "5", placeholder: a.default ?? (a.required ? "required" : "") });
      }
      input.title = fmtArgument(a);
      inputs.set(a.name, input);
      return el("label", { title: fmtArgument(a) }, `${a.name}${a.unit ? ` [${a.unit}]` : ""} `, input);
    });
    const build = el("button", { text: "open", title: "build the task this command makes and open it in the editor" });
    build.addEventListener("click", async () => {
      const args: Record<string, string> = {};
      for (const [name, input] of inputs) if (input.value.trim() !== "") args[name] = input.value.trim();
      const r = await run(`${c.name}`, { type: "command", command: c.name, arguments: args }, (r) => `${c.name} built ${String(r.name ?? "a task")}; preview it, upload it, start it`);
      if (!r) return;
      open(String(r.name ?? c.name), String(r.text ?? ""), `task command ${c.name}${r.scene || c.scene ? `, for the ${String(r.scene || c.scene)} scene` : ""}`, null, String(r.scene || c.scene || ""));
    });
    return el("div", { class: "command", "data-command": c.name, title: c.summary },
      el("div", {}, el("b", { text: c.name }), el("span", { class: "dim", text: ` ${c.summary}` })),
      el("div", { class: "row" }, ...fields, build));
  };

  const loadCommands = async () => {
    try {
      const r = await conn.request({ type: "commands" });
      const cmds = (r.commands ?? []) as Command[];
      commandsBody.replaceChildren(...cmds.map(commandForm));
    } catch (e) {
      commandsBody.replaceChildren(el("div", { class: "bad", text: (e as Error).message }));
    }
  };

  store.on("hello", () => {
    void loadList();
    void loadShipped();
    void loadCommands();
  });
  store.on("active", () => {
    stored = null;
    void loadList();
  });
  layout();
}
