// hf_tokenize.mjs -- tokens and ids of texts, from a tokenizer.json, by Hugging Face's own
// tokenizers.js (the npm package @huggingface/tokenizers; make_decoder_fixtures.py pins 0.2.0).
//
//   node tests/tools/hf_tokenize.mjs NODE_MODULES_DIR < requests.json > answers.json
//
// requests.json: [{"dir": "<folder with tokenizer.json and tokenizer_config.json>", "text": "..."}, ...]
// answers.json:  [{"tokens": [...], "ids": [...]}, ...] in the same order. Special tokens are
// added as the tokenizer's post-processor says (e.g. <s> for the Llama-style fixtures).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const nm = process.argv[2];
if (!nm) {
  console.error("usage: node hf_tokenize.mjs NODE_MODULES_DIR < requests.json");
  process.exit(2);
}
const lib = await import(pathToFileURL(path.join(nm, "@huggingface", "tokenizers", "dist", "tokenizers.mjs")).href);
const requests = JSON.parse(fs.readFileSync(0, "utf8"));
const cache = new Map();
const out = [];
for (const { dir, text } of requests) {
  if (!cache.has(dir)) {
    const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
    const cfgPath = path.join(dir, "tokenizer_config.json");
    const cfg = fs.existsSync(cfgPath) ? JSON.parse(fs.readFileSync(cfgPath, "utf8")) : {};
    cache.set(dir, new lib.Tokenizer(json, cfg));
  }
  const enc = cache.get(dir).encode(text);
  out.push({ tokens: enc.tokens, ids: Array.from(enc.ids) });
}
process.stdout.write(JSON.stringify(out) + "\n");
