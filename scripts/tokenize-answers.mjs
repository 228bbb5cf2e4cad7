// Tokenize the canned answers (data/answers/*.md) with a real BPE tokenizer and write
// data/answers/tokens.json, the token strings the page streams one by one.
//
// Tokenizer: OpenAI's o200k_base through the npm package gpt-tokenizer (pinned in
// package-lock.json). Token counts of other tokenizers (Llama 3, Qwen, Gemma) differ by a few
// percent on English prose and more on code; o200k is a fair, reproducible stand-in, and it gives
// code and prose their own densities (code splits into more, shorter tokens).
//
//   node scripts/tokenize-answers.mjs           write data/answers/tokens.json
//   node scripts/tokenize-answers.mjs --check   fail if the committed file is stale

import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { decode, encode } from "gpt-tokenizer/encoding/o200k_base";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const answersDir = join(root, "data", "answers");
const outPath = join(answersDir, "tokens.json");
const tokenizerVersion = JSON.parse(readFileSync(join(root, "node_modules", "gpt-tokenizer", "package.json"), "utf8")).version;

/** Split "---\nkey: value\n---\nbody" into {meta, body}. */
function parseAnswer(text, name) {
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!match) throw new Error(`${name}: missing the --- header ---`);
  const meta = {};
  for (const line of match[1].split("\n")) {
    const at = line.indexOf(":");
    if (at < 1) throw new Error(`${name}: bad header line ${JSON.stringify(line)}`);
    meta[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  for (const key of ["title", "prompt"]) if (!meta[key]) throw new Error(`${name}: header needs ${key}`);
  return { meta, body: match[2].trimEnd() + "\n" };
}

/** One string per token; a token that ends inside a multi-byte character shows as "" and the
 *  character appears with the token that completes it, so the strings join to the text. */
function tokenStrings(text) {
  const ids = encode(text);
  const out = [];
  let pending = [];
  for (const id of ids) {
    pending.push(id);
    const piece = decode(pending);
    if (piece.includes("\uFFFD")) {
      out.push("");
      continue;
    }
    out.push(piece);
    pending = [];
  }
  if (out.join("") !== text) throw new Error("token strings do not rebuild the text");
  return out;
}

const answers = {};
for (const file of readdirSync(answersDir).filter((f) => f.endsWith(".md")).sort()) {
  const kind = file.replace(/\.md$/, "");
  const { meta, body } = parseAnswer(readFileSync(join(answersDir, file), "utf8"), file);
  answers[kind] = {
    title: meta.title,
    prompt: meta.prompt,
    prompt_tokens: encode(meta.prompt).length,
    tokens: tokenStrings(body),
  };
}
const document = {
  generated_by: "node scripts/tokenize-answers.mjs",
  tokenizer: `o200k_base (gpt-tokenizer ${tokenizerVersion})`,
  answers,
};
const text = JSON.stringify(document, null, 1) + "\n";
if (process.argv.includes("--check")) {
  const committed = readFileSync(outPath, "utf8");
  if (committed !== text) {
    console.error("data/answers/tokens.json is stale: run node scripts/tokenize-answers.mjs");
    process.exit(1);
  }
  console.log("data/answers/tokens.json is up to date");
} else {
  writeFileSync(outPath, text);
  for (const [kind, a] of Object.entries(answers)) console.log(`${kind}: ${a.tokens.length} tokens`);
}
