// Path decisions of the pytest-skill-eval guard, as pure functions (unit-tested with node).
//
// The guard must judge exactly the file a tool will open, so this mirrors pi 1.6.0:
//   utils/paths.js normalizePath + resolvePath, core/tools/path-utils.js resolveToCwd
//   (write, edit) and resolveReadPathAsync (read: falls back to macOS-style variants).
// 1. every Unicode space in [\u00A0\u2000-\u200A\u202F\u205F\u3000] becomes " "
// 2. one leading "@" is dropped
// 3. "~" is HOME, "~/x" is HOME joined with x (os.homedir() at call time, as pi does)
// 4. otherwise a leading "file://" is a URL: node's fileURLToPath (percent-decoding,
//    "file://localhost/"; any other host, or an encoded "/", throws)
// 5. absolute ? path.resolve(p) : path.resolve(base, p), base = ctx.cwd || the tool's cwd
// read also opens, when the resolved path does not exist, the first existing of: " AM."/
// " PM." with U+202F, NFD, "'" as U+2019, NFD plus U+2019. Every candidate is judged.
// Each candidate is canonicalised (realpath of the deepest existing ancestor plus the
// missing tail); anything this cannot do with certainty is refused.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const PREFIX = "skill-eval guard blocked";
const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;

/** Thrown for anything the guard refuses to resolve. */
export class Uncertain extends Error {}

/** The absolute path pi's resolveToCwd gives for `raw` against `base` (lexical only). */
export function resolveLikePi(raw, base, home = os.homedir()) {
  if (typeof raw !== "string") throw new Uncertain("the path is not a string");
  if (raw.length === 0) throw new Uncertain("the path is empty");
  if (raw.includes("\0")) throw new Uncertain("the path contains a NUL byte");
  if (typeof base !== "string" || !path.isAbsolute(base)) throw new Uncertain("the working directory is unknown");
  if (typeof home !== "string" || !path.isAbsolute(home)) throw new Uncertain("HOME is not absolute");
  let p = raw.replace(UNICODE_SPACES, " ");
  if (p.startsWith("@")) p = p.slice(1);
  if (p === "~") return path.resolve(home);
  if (p.startsWith("~/")) return path.resolve(path.join(home, p.slice(2)));
  if (/^file:\/\//.test(p)) {
    try {
      p = fileURLToPath(p);
    } catch (err) {
      throw new Uncertain(`not a local file URL (${err?.message ?? err})`);
    }
  }
  if (p.includes("\0")) throw new Uncertain("the path contains a NUL byte");
  return path.isAbsolute(p) ? path.resolve(p) : path.resolve(base, p);
}

/** Every path the tool may open for `raw` (read: the fallback variants too). */
export function candidatesLikePi(tool, raw, base, home = os.homedir()) {
  const resolved = resolveLikePi(raw, base, home);
  if (tool !== "read") return [resolved];
  const nfd = resolved.normalize("NFD");
  const curly = (s) => s.replace(/'/g, "\u2019");
  const all = [resolved, resolved.replace(/ (AM|PM)\./gi, "\u202F$1."), nfd, curly(resolved), curly(nfd)];
  return [...new Set(all)];
}

/** Where `p` (absolute, normalised) lands once every existing symlink is followed. */
export function canonical(p) {
  let head = p;
  const tail = [];
  for (;;) {
    try {
      return path.join(fs.realpathSync(head), ...tail);
    } catch (err) {
      if (err?.code !== "ENOENT") throw new Uncertain(`cannot resolve ${head} (${err?.code ?? err})`);
    }
    // realpath failed with ENOENT: a missing entry, or a dangling symlink/loop somewhere.
    // Only a truly absent leaf may be re-appended; a dangling link would be followed by write.
    try {
      fs.lstatSync(head);
      throw new Uncertain(`${head} exists but does not resolve (dangling symlink?)`);
    } catch (err) {
      if (err instanceof Uncertain) throw err;
      if (err?.code !== "ENOENT") throw new Uncertain(`cannot inspect ${head} (${err?.code ?? err})`);
    }
    const parent = path.dirname(head);
    if (parent === head) throw new Uncertain("no existing ancestor");
    tail.unshift(path.basename(head));
    head = parent;
  }
}

/** "FIFO", "socket" or "device" when `p` exists and is one, else undefined. */
export function specialKind(p) {
  let st;
  try {
    st = fs.statSync(p);
  } catch (err) {
    if (err?.code === "ENOENT") return undefined;
    throw new Uncertain(`cannot inspect ${p} (${err?.code ?? err})`);
  }
  if (st.isFIFO()) return "FIFO";
  if (st.isSocket()) return "socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "device";
  return undefined;
}

export function inside(p, root) {
  return p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * The guard's verdict for one tool call: undefined to allow, or the block reason.
 * config: {workspace, readRoots, deny}; cwds: the directories pi may resolve against.
 */
export function decide(tool, input, config, cwds, home = os.homedir()) {
  const raw = input?.path;
  // printable ASCII as given (the message format evidence views show); anything else quoted,
  // so invisible or control characters in the attempted path stay visible
  const shown = typeof raw !== "string" ? `<${typeof raw}>` : /^[\x20-\x7e]*$/.test(raw) ? raw : JSON.stringify(raw);
  try {
    const bases = [...new Set(cwds.filter((c) => c))];
    if (bases.length === 0) throw new Uncertain("the working directory is unknown");
    for (const b of bases) {
      if (typeof b !== "string" || canonical(path.resolve(b)) !== config.workspace) {
        throw new Uncertain(`the working directory ${b} is not the workspace`);
      }
    }
    const roots = tool === "read" ? [config.workspace, ...config.readRoots] : [config.workspace];
    const where = tool === "read" ? "the workspace and declared resources" : "the workspace";
    for (const base of bases) {
      for (const candidate of candidatesLikePi(tool, raw, base, home)) {
        const target = canonical(candidate);
        if ((config.deny ?? []).some((d) => inside(target, d))) {
          return `${PREFIX}: ${tool} of ${shown} resolves to ${target}, which is evaluator-private`;
        }
        if (!roots.some((root) => inside(target, root))) {
          return `${PREFIX}: ${tool} of ${shown} resolves to ${target}, outside ${where}`;
        }
        const kind = specialKind(target);
        if (kind !== undefined) {
          return `${PREFIX}: ${tool} of ${shown} resolves to ${target}, a ${kind} (opening it could block forever)`;
        }
      }
    }
    return undefined;
  } catch (err) {
    const why = err instanceof Uncertain ? err.message : `unexpected error: ${err?.message ?? err}`;
    return `${PREFIX}: ${tool} of ${shown} cannot be resolved with certainty (${why})`;
  }
}
