// pytest-skill-eval isolation guard: the first extension pi loads for every variant.
//
// read  -> only inside the workspace or a declared immutable resource
// write/edit -> only inside the workspace
// The path is resolved exactly as pi's tools resolve it and then canonicalised (see
// guard-paths.mjs); anything that cannot be resolved with certainty is refused.
// A blocked call reaches the model as a tool error whose text starts with the prefix
// "skill-eval guard blocked"; the evaluator recognises blocked calls by it.
//
// This file is a template: the engine writes a per-variant copy, outside the workspace,
// with the configuration inlined below as a JSON literal, so no environment variable or
// file the subject could set or redirect decides what the guard allows. Unconfigured,
// the guard refuses every path.
import process from "node:process";
import { PREFIX, decide } from "./guard-paths.mjs";

const config = /*SKILL_EVAL_GUARD_CONFIG*/ null;

export default function guard(pi) {
  // Declared context replaces ambient project instructions: pi renders it exactly where
  // AGENTS.md files would appear (<project_context>), in declared order.
  pi.on("before_agent_start", async (event) => {
    event.systemPromptOptions.contextFiles = (config?.context ?? []).map((c) => ({ path: c.path, content: c.content }));
    return undefined;
  });
  pi.on("tool_call", async (event, ctx) => {
    const name = event.toolName;
    if (name !== "read" && name !== "write" && name !== "edit") return undefined;
    if (config === null) return { block: true, reason: `${PREFIX}: ${name}: the guard has no configuration` };
    // the tool resolves against ctx.cwd, else the cwd it was created with (pi's process cwd)
    const reason = decide(name, event.input, config, [ctx?.cwd, process.cwd()]);
    return reason === undefined ? undefined : { block: true, reason };
  });
}
