// pytest-skill-eval context observer: loaded last, never changes anything.
//
// Per declared turn (one before_agent_start each) it records the chained system prompt
// as every earlier extension left it, and for each model request the provider-neutral
// `context` message projection, numbered from 1 within the turn. Records are appended
// as JSON lines to the output file. This file is a template: the engine writes a
// per-variant copy with the output path inlined below (never taken from the environment).
import fs from "node:fs";

const config = /*SKILL_EVAL_OBSERVER_CONFIG*/ null;

export default function observer(pi) {
  if (config === null) throw new Error("skill-eval observer: no configuration");
  const out = config.out;
  let turn = 0;
  let request = 0;
  let systemPrompt = "";
  const append = (record) => fs.appendFileSync(out, JSON.stringify(record) + "\n");
  pi.on("before_agent_start", async (event) => {
    turn += 1;
    request = 0;
    systemPrompt = event.systemPrompt;
    append({ kind: "system-prompt", turn, system_prompt: systemPrompt });
    return undefined;
  });
  pi.on("context", async (event) => {
    request += 1;
    append({ kind: "request", turn, request, system_prompt: systemPrompt, provider_context: JSON.stringify(event.messages) });
    return undefined;
  });
}
