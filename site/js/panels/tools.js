// The tool panels (site/templates/panels/reverse.j2, agent.j2, measure.j2): each tool's elements,
// found inside its own section, handed to its module.

import { $ } from "../dom.js";
import { Reverse } from "../reverse.js";
import { Agent } from "../agent.js";
import { Measure } from "../measure.js";

/** `ids` {key: "#id"} -> {key: element} inside `root`. */
function inside(root, ids) {
  return Object.fromEntries(Object.entries(ids).map(([key, selector]) => [key, $(selector, root)]));
}

export function reversePanel(root, app) {
  return new Reverse(inside(root, { form: "#reverse-form", min: "#reverse-min", budget: "#reverse-budget", priced: "#reverse-priced", status: "#reverse-status", table: "#reverse-table" }), app);
}

export function agentPanel(root, app) {
  const ids = {
    form: "#agent-form",
    turns: "#agent-turns",
    gen: "#agent-gen",
    tools: "#agent-tools",
    latency: "#agent-latency",
    result: "#agent-result",
    cache: "#agent-cache",
    total: "#agent-total",
    stack: "#agent-stack",
    note: "#agent-note",
    turnsTable: "#agent-turns-table",
  };
  return new Agent(inside(root, ids), app);
}

export function measurePanel(root, app) {
  const ids = {
    form: "#measure-form",
    url: "#measure-url",
    model: "#measure-model",
    run: '[data-testid="measure-run"]',
    status: "#measure-status",
    table: "#measure-table",
    ttft: "#measure-ttft",
    tps: "#measure-tps",
    ttftPred: "#measure-ttft-pred",
    ttftOwn: "#measure-ttft-own",
    ppPred: "#measure-pp-pred",
    ppOwn: "#measure-pp-own",
    tpsOwn: "#measure-tps-own",
    predicted: '[data-testid="measure-predicted-tps"]',
    detected: '[data-testid="measure-model-detected"]',
    flags: "#measure-flags",
    share: '[data-testid="measure-share"]',
    shareNote: "#measure-share-note",
    token: "#measure-token",
    log: "#measure-log",
    origin: "#page-origin",
  };
  return new Measure(inside(root, ids), app);
}
