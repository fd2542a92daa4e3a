// Unit test of guard-paths.mjs, run by tests/isolation/test_guard_paths.py:
//   node guard_paths_test.mjs <guard-paths.mjs> <pi's dist/core/tools/path-utils.js>
// 1. differential: our resolution equals pi's own resolveToCwd / resolveReadPath
// 2. decisions: every path form is allowed or refused exactly as it should be
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [gp, pu] = process.argv.slice(2);
const G = await import(pathToFileURL(gp).href);
const P = await import(pathToFileURL(pu).href);

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "guard-paths-")));
const ws = path.join(tmp, "workspace"), home = path.join(tmp, "home"), out = path.join(tmp, "outside");
const skill = path.join(tmp, "skills", "target"), agent = path.join(tmp, "agent");
for (const d of [ws, home, out, skill, agent, path.join(ws, "sub")]) fs.mkdirSync(d, { recursive: true });
process.env.HOME = home;
fs.writeFileSync(path.join(ws, "inside.txt"), "in");
fs.writeFileSync(path.join(skill, "SKILL.md"), "skill");
fs.writeFileSync(path.join(agent, "auth.json"), "{}");
fs.writeFileSync(path.join(out, "secret.txt"), "secret");
fs.symlinkSync(out, path.join(ws, "link"));
fs.symlinkSync(path.join(out, "not-there.txt"), path.join(ws, "dangling"));
fs.symlinkSync("loop", path.join(ws, "loop"));
fs.symlinkSync(path.join(ws, "sub"), path.join(ws, "inlink"));
fs.writeFileSync(path.join(ws, "caf\u00e9.txt".normalize("NFD")), "nfd");
fs.writeFileSync(path.join(ws, "it\u2019s.txt"), "curly");
fs.writeFileSync(path.join(ws, "shot 1\u202FPM.png"), "shot");
// read variants: a name that exists outside only in its NFD / curly form
const outNfd = path.join(out, "caf\u00e9.txt".normalize("NFD"));
fs.writeFileSync(outNfd, "nfd-out");
fs.writeFileSync(path.join(out, "o\u2019k.txt"), "curly-out");
fs.symlinkSync(out, path.join(ws, "r\u2019"));

const config = { workspace: ws, readRoots: [skill], deny: [agent, path.join(tmp, "host-extensions")] };
const forms = [
  "inside.txt", "./inside.txt", "sub/../inside.txt", "../outside/secret.txt", "sub/../../outside/secret.txt",
  `${ws}/inside.txt`, `${out}/secret.txt`, "/etc/passwd", "/proc/self/environ", `@inside.txt`, `@${out}/secret.txt`,
  "@@inside.txt", "@~/x", "~", "~/x", "~/../workspace/inside.txt", "~user", "~user/x", `file://${ws}/inside.txt`,
  `file://${out}/secret.txt`, "file:///etc/passwd", `file://localhost${out}/secret.txt`, `file://localhost${ws}/new.txt`,
  `file://${ws}/%2e%2e/outside/secret.txt`, `file://${ws}/a%2Fb`, `file://${ws}/%2E%2E%2Foutside`, "file://otherhost/x",
  "file:/etc/passwd", "FILE:///etc/passwd", `file://${ws}/inside.txt?q#h`, `file://${ws}/caf%C3%A9.txt`,
  `${ws}/in\u00a0side.txt`, `inside\u2003.txt`, `\u3000../outside/secret.txt`, "link/secret.txt", "link", "link/new.txt",
  "dangling", "loop", "loop/x", "inlink/x.txt", "inside.txt/x", "caf\u00e9.txt", "it's.txt", "shot 1 PM.png",
  `../outside/caf\u00e9.txt`, `../outside/o'k.txt`, "r'/secret.txt", `${agent}/auth.json`, `${skill}/SKILL.md`,
  `file://${skill}/SKILL.md`, `${tmp}/host-extensions/guard.mjs`, "", "a\0b", `file://${ws}/a%00b`,
];

// 1. differential against pi's own functions
for (const raw of forms) {
  let theirs, ours;
  try { theirs = P.resolveToCwd(raw, ws); } catch (e) { theirs = "throws"; }
  try { ours = G.resolveLikePi(raw, ws, home); } catch (e) { ours = "throws"; }
  if (raw === "" || raw.includes("\0") || raw.includes("%00")) continue; // we refuse; pi would error or open cwd
  assert.equal(ours, theirs, `resolveToCwd(${JSON.stringify(raw)})`);
  if (theirs === "throws") continue;
  const opened = await P.resolveReadPathAsync(raw, ws);
  assert.ok(G.candidatesLikePi("read", raw, ws, home).includes(opened), `read of ${JSON.stringify(raw)} opens ${opened}`);
  assert.equal(P.resolveReadPath(raw, ws), opened);
}

// 2. decisions
const allowed = {
  read: ["\u3000../outside/secret.txt", "file:/etc/passwd", "FILE:///etc/passwd", "@@inside.txt", "~/../workspace/inside.txt", "inside.txt", "./inside.txt", "sub/../inside.txt", `${ws}/inside.txt`, "@inside.txt", `file://${ws}/inside.txt`,
         `file://localhost${ws}/new.txt`, `file://${ws}/inside.txt?q#h`, `file://${ws}/caf%C3%A9.txt`, `${ws}/in\u00a0side.txt`,
         `inside\u2003.txt`, "~user", "~user/x", "inlink/x.txt", "caf\u00e9.txt", "it's.txt", "shot 1 PM.png",
         `${skill}/SKILL.md`, `file://${skill}/SKILL.md`],
  write: ["r'/secret.txt", "./inside.txt", "@inside.txt", `${ws}/inside.txt`, `file://${ws}/inside.txt`, "\u3000../outside/secret.txt", "file:/etc/passwd", "FILE:///etc/passwd", "@@inside.txt", "~/../workspace/inside.txt", "~user/x", "caf\u00e9.txt", "it's.txt", "shot 1 PM.png",
          "sub/../inside.txt", `${ws}/in\u00a0side.txt`, `file://${ws}/inside.txt?q#h`, `file://${ws}/caf%C3%A9.txt`, "inside.txt", "./new.txt", "sub/deep/new.txt", `${ws}/x`, "@x", `file://${ws}/x`, `file://localhost${ws}/new.txt`,
          "~user", "inlink/x.txt", `inside\u2003.txt`],
};
allowed.edit = allowed.write;
// read refuses "r'/secret.txt" (its U+2019 variant is a link out); write/edit create "r'" inside
for (const tool of ["read", "write", "edit"]) {
  for (const raw of forms) {
    const verdict = G.decide(tool, { path: raw }, config, [ws, ws], home);
    const ok = allowed[tool].includes(raw);
    if (ok) assert.equal(verdict, undefined, `${tool} ${JSON.stringify(raw)} should be allowed`);
    else assert.ok(verdict?.startsWith(G.PREFIX), `${tool} ${JSON.stringify(raw)} should be blocked, got ${verdict}`);
  }
  for (const input of [{}, { path: 1 }, { path: null }, { file_path: "inside.txt" }, null, undefined]) {
    assert.ok(G.decide(tool, input, config, [ws], home)?.startsWith(G.PREFIX), `${tool} ${JSON.stringify(input)}`);
  }
  // a working directory other than the workspace makes every resolution uncertain
  assert.ok(G.decide(tool, { path: "inside.txt" }, config, [ws, out], home)?.startsWith(G.PREFIX));
  assert.ok(G.decide(tool, { path: "inside.txt" }, config, [undefined, ""], home)?.startsWith(G.PREFIX));
  assert.ok(G.decide(tool, { path: "inside.txt" }, config, ["relative"], home)?.startsWith(G.PREFIX));
  assert.equal(G.decide(tool, { path: "inside.txt" }, config, [undefined, ws], home), undefined);
  assert.equal(G.decide(tool, { path: "inside.txt" }, config, [path.join(ws, "inlink", "..")], home), undefined);
}
assert.match(G.decide("read", { path: `${agent}/auth.json` }, config, [ws], home), /evaluator-private/);
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`ok ${forms.length} forms x 3 tools`);
