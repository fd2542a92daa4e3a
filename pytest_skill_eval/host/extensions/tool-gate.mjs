// pytest-skill-eval tool gate: loaded right after the guard, before declared bundles.
//
// Only the declared tools run: a call to any other tool (a native tool an extension
// switched on, a tool a bundle registered but the definition did not declare) is blocked
// with the guard's prefix, so it is evidence, never an unguarded action.
// Before every model request it records the tools pi actually has active, as JSON lines
// in active-tools.jsonl beside this file; the evaluator compares them with the declared
// list. This file is a template: the evaluator writes a copy per variant, outside the
// workspace, with the configuration inlined below; no environment variable can redirect
// either. Unconfigured, the gate blocks every tool.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const config = /*SKILL_EVAL_TOOL_GATE_CONFIG*/ null;
const DECLARED = config?.declared ?? [];
const PREFIX = "skill-eval guard blocked";
const out = path.join(path.dirname(fileURLToPath(import.meta.url)), "active-tools.jsonl");

export default function toolGate(pi) {
  pi.on("context", async () => {
    fs.appendFileSync(out, JSON.stringify({ active: pi.getActiveTools() }) + "\n");
    return undefined;
  });
  pi.on("tool_call", async (event) => {
    if (DECLARED.includes(event.toolName)) return undefined;
    return { block: true, reason: `${PREFIX}: tool ${JSON.stringify(event.toolName)} is not declared for this group` };
  });
}
