// pytest-skill-eval isolation guard: the first extension pi loads for every variant.
//
// read  -> only inside the workspace or a declared immutable resource
// write/edit -> only inside the workspace
// Decided on canonical paths (symlinks resolved), mirroring how pi resolves a tool
// path: a leading "@" is dropped, "~" expands to HOME, relative paths join the cwd.
// A blocked call reaches the model as a tool error whose text starts with the prefix
// below; the evaluator recognises blocked calls in the transcript by it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const PREFIX = "skill-eval guard blocked";
const config = JSON.parse(fs.readFileSync(process.env.SKILL_EVAL_GUARD_CONFIG, "utf8"));

function canonical(p) {
  // realpath of the deepest existing ancestor, then the missing tail re-appended,
  // so a write to a new file under a symlinked directory is judged by where it lands.
  let head = path.resolve(p);
  const tail = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(head), ...tail);
    } catch {
      const parent = path.dirname(head);
      if (parent === head) return path.join(head, ...tail);
      tail.unshift(path.basename(head));
      head = parent;
    }
  }
}

function resolveToolPath(raw, cwd) {
  let p = String(raw).replace(/^@/, "");
  if (p === "~") p = os.homedir();
  else if (p.startsWith("~/")) p = path.join(os.homedir(), p.slice(2));
  return canonical(path.resolve(cwd, p));
}

function inside(p, root) {
  return p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

export default function guard(pi) {
  // Declared context replaces ambient project instructions: pi renders it exactly where
  // AGENTS.md files would appear (<project_context>), in declared order.
  pi.on("before_agent_start", async (event) => {
    event.systemPromptOptions.contextFiles = (config.context ?? []).map((c) => ({ path: c.path, content: c.content }));
    return undefined;
  });
  pi.on("tool_call", async (event, ctx) => {
    const name = event.toolName;
    if (name !== "read" && name !== "write" && name !== "edit") return undefined;
    const raw = event.input?.path ?? event.input?.file_path;
    if (typeof raw !== "string" || raw.length === 0) {
      return { block: true, reason: `${PREFIX}: ${name} without a path` };
    }
    const cwd = ctx?.cwd ?? process.cwd();
    const target = resolveToolPath(raw, cwd);
    const roots = name === "read" ? [config.workspace, ...config.readRoots] : [config.workspace];
    if (roots.some((root) => inside(target, root))) return undefined;
    const where = name === "read" ? "the workspace and declared resources" : "the workspace";
    return { block: true, reason: `${PREFIX}: ${name} of ${raw} resolves to ${target}, outside ${where}` };
  });
}
