// term-images.mjs -- the images in a terminal stream (sixel and the kitty graphics protocol), decoded
// back to pixels, for tests of pixel heatmaps. A small decoder written from the protocols' documents
// (DEC VT330/340 reference ch. 14; sw.kovidgoyal.net/kitty/graphics-protocol), independent of the encoder.
//
//   node term-images.mjs list STREAM
//       one line per image: "PROTO WxH at ROW,COL" (ROW, COL of its top-left cell, counted from 0 by a
//       tiny terminal that follows newlines, cursor moves and saves; -1 when unknown)
//   node term-images.mjs compare STREAM ANSI PNG CELL_W CELL_H [IMAGE]
//       the heatmap of STREAM (image IMAGE, 0 by default) against the same heatmap drawn in character
//       cells: ANSI is its 24-bit terminal text (--color always), PNG the rendering of its SVG with
//       cells of CELL_W x CELL_H pixels. The matrix is found in ANSI as the block of n rows of n cells
//       of width 2 with their own colours; for every token pair (i, j) the colour at the centre of the
//       image's block (i, j) must equal the PNG's at the centre of cell (i, j): exactly for kitty, within
//       1 per channel for sixel (its colours are percentages). Prints "N pairs, M differ".
//   node term-images.mjs same A B N
//       the last image of stream A against the first of stream B, both N x N blocks: "... M differ" counts the
//       token pairs whose block centres differ.
//   node term-images.mjs screen SHOT.png X0 Y0 B ANSI PNG CELL_W CELL_H
//       a screenshot of a real terminal showing the heatmap as an image with its top-left pixel at X0,Y0
//       and blocks of B pixels, against the SVG's rendering (ANSI and PNG as for compare): every block
//       centre within 2 per channel (the terminal's own colour conversion of sixel's percentages).
//   node term-images.mjs overlap STREAM CELL_W CELL_H
//       "I images, T text cells, K over images": text written where an image is (cells of CELL_W x
//       CELL_H pixels in the stream's terminal) would erase its pixels, so K must be 0.
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const ESC = "\x1b";

function decodeSixel(body) { // body: from after "ESC P" to before "ESC \"
	const q = body.indexOf("q");
	const params = body.slice(0, q).split(";").map(Number);
	const keep = params[1] === 1; // P2 = 1: unset pixels stay transparent
	let i = q + 1, w = 0, h = 0;
	const regs = new Map();
	let px = new Map(); // "x,y" -> [r,g,b]
	let x = 0, band = 0, colour = 0, maxX = 0, maxY = 0;
	const num = () => { let s = ""; while (i < body.length && /[0-9]/.test(body[i])) s += body[i++]; return Number(s || 0); };
	while (i < body.length) {
		const c = body[i];
		if (c === '"') { i++; num(); i++; num(); i++; w = num(); i++; h = num(); }
		else if (c === "#") {
			i++; const n = num();
			if (body[i] === ";") {
				i++; const kind = num(); i++; const a = num(); i++; const b = num(); i++; const d = num();
				if (kind !== 2) throw new Error("only RGB colour registers");
				regs.set(n, [a, b, d].map((p) => Math.round((p * 255) / 100)));
			}
			colour = n;
		} else if (c === "$") { x = 0; i++; }
		else if (c === "-") { x = 0; band++; i++; }
		else if (c === "!") {
			i++; const count = num(); const ch = body.charCodeAt(i++) - 63;
			for (let k = 0; k < count; k++, x++) for (let b = 0; b < 6; b++) if (ch & (1 << b)) { px.set(`${x},${band * 6 + b}`, regs.get(colour)); maxX = Math.max(maxX, x + 1); maxY = Math.max(maxY, band * 6 + b + 1); }
		} else if (c >= "?" && c <= "~") {
			const ch = c.charCodeAt(0) - 63;
			for (let b = 0; b < 6; b++) if (ch & (1 << b)) { px.set(`${x},${band * 6 + b}`, regs.get(colour)); maxX = Math.max(maxX, x + 1); maxY = Math.max(maxY, band * 6 + b + 1); }
			x++; i++;
		} else i++;
	}
	w = w || maxX, h = h || maxY;
	return { proto: "sixel", w, h, at: (x, y) => px.get(`${x},${y}`) ?? (keep ? null : "background") };
}

function decodeKitty(chunks) { // the control data of the first chunk, the payloads in order
	const ctl = Object.fromEntries(chunks[0].ctl.split(",").map((kv) => kv.split("=")));
	if (ctl.f !== "32") throw new Error("only f=32 (RGBA)");
	const data = Buffer.from(chunks.map((c) => c.payload).join(""), "base64");
	const w = Number(ctl.s), h = Number(ctl.v);
	if (data.length !== w * h * 4) throw new Error(`kitty: ${data.length} bytes for ${w}x${h}`);
	return { proto: "kitty", w, h, at: (x, y) => { const k = 4 * (y * w + x); return data[k + 3] ? [data[k], data[k + 1], data[k + 2]] : null; } };
}

// Walk the stream as a terminal would: the cursor, and the images with the cell they start at.
export function images(stream) {
	const out = [], saved = [0, 0], textCells = [];
	let row = 0, col = 0, kitty = null;
	for (let i = 0; i < stream.length;) {
		const c = stream[i];
		if (c === ESC) {
			const n = stream[i + 1];
			if (n === "P" || n === "_") {
				const end = stream.indexOf(ESC + "\\", i);
				const body = stream.slice(i + 2, end);
				if (n === "P") out.push({ ...decodeSixel(body), row, col });
				else if (body[0] === "G") {
					const semi = body.indexOf(";");
					const ctl = body.slice(1, semi < 0 ? body.length : semi), payload = semi < 0 ? "" : body.slice(semi + 1);
					const more = /(^|,)m=1(,|$)/.test(ctl);
					if (/(^|,)a=[Tt](,|$)/.test(ctl)) kitty = { chunks: [{ ctl, payload }], row, col };
					else if (kitty) kitty.chunks.push({ ctl, payload });
					if (!more && kitty) { out.push({ ...decodeKitty(kitty.chunks), row: kitty.row, col: kitty.col }); kitty = null; }
				}
				i = end + 2;
			} else if (n === "7") { saved[0] = row; saved[1] = col; i += 2; }
			else if (n === "8") { row = saved[0]; col = saved[1]; i += 2; }
			else if (n === "[") {
				let j = i + 2;
				while (j < stream.length && !/[@-~]/.test(stream[j])) j++;
				const p = stream.slice(i + 2, j).split(";").map((v) => Number(v || 0)), f = stream[j];
				if (f === "A") row -= p[0] || 1;
				else if (f === "B") row += p[0] || 1;
				else if (f === "C") col += p[0] || 1;
				else if (f === "D") col -= p[0] || 1;
				else if (f === "H") { row = (p[0] || 1) - 1; col = (p[1] || 1) - 1; }
				i = j + 1;
			} else i += 2;
		} else if (c === "\n") { row++; col = 0; i++; }
		else if (c === "\r") { col = 0; i++; }
		else { const cp = stream.codePointAt(i); textCells.push([row, col]); col++; i += cp > 0xffff ? 2 : 1; }
	}
	return { images: out, textCells };
}

// The heatmap's cells in a 24-bit ANSI text: [{x, y, rgb}] of the n x n matrix of cells 2 wide.
function ansiMatrix(text) {
	const grid = text.split("\n").map((line) => {
		const cells = [];
		let bg = null;
		for (let i = 0; i < line.length;) {
			if (line[i] === ESC && line[i + 1] === "[") {
				const end = line.indexOf("m", i);
				const p = line.slice(i + 2, end).split(";").map(Number);
				for (let k = 0; k < p.length; k++) {
					if (p[k] === 0) bg = null;
					else if ((p[k] === 38 || p[k] === 48) && p[k + 1] === 2) { if (p[k] === 48) bg = p.slice(k + 2, k + 5); k += 4; }
				}
				i = end + 1;
				continue;
			}
			const cp = line.codePointAt(i);
			cells.push(cp === 0x20 ? bg : null);
			i += cp > 0xffff ? 2 : 1;
		}
		return cells;
	});
	// The matrix: a row whose coloured run of 2n cells from column x ends n rows that all start coloured
	// at x (the last query sees every key, also in a causal model). The largest such n.
	let best = null;
	for (let y = 0; y < grid.length; y++) {
		for (let x = 0; x < grid[y].length; x++) {
			if (!grid[y][x] || (x > 0 && grid[y][x - 1])) continue;
			let run = 0;
			while (grid[y][x + run]) run++;
			if (run % 2 || run < 4) continue;
			const n = run / 2, y0 = y - n + 1;
			if (y0 < 0 || (best && best.n >= n)) continue;
			let ok = true;
			for (let r = y0; r <= y && ok; r++) ok = !!(grid[r] && grid[r][x] && grid[r][x + 1] && !(x > 0 && grid[r][x - 1]));
			if (ok) best = { n, x, y: y0, at: (i, j) => grid[y0 + i][x + 2 * j] };
		}
	}
	if (best) return best;
	throw new Error("no heatmap matrix in the ANSI text");
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === "list") {
	for (const im of images(readFileSync(args[0], "utf8")).images) console.log(`${im.proto} ${im.w}x${im.h} at ${im.row},${im.col}`);
} else if (cmd === "compare") {
	const [streamFile, ansiFile, pngFile, cw, ch, which] = args;
	const { images: ims, textCells } = images(readFileSync(streamFile, "utf8"));
	const im = ims[Number(which || 0)];
	if (!im) throw new Error("no image in the stream");
	const m = ansiMatrix(readFileSync(ansiFile, "utf8"));
	const W = Number(cw), H = Number(ch), b = im.w / m.n;
	if (b !== Math.floor(b) || im.h / m.n !== b) throw new Error(`image ${im.w}x${im.h} is not ${m.n} blocks a side`);
	const pts = [];
	for (let i = 0; i < m.n; i++) for (let j = 0; j < m.n; j++) pts.push([i, j]);
	const tool = join(dirname(fileURLToPath(import.meta.url)), "png-pixels.mjs");
	const png = execFileSync(process.execPath, [tool, pngFile, ...pts.map(([i, j]) => `${(m.x + 2 * j) * W + W},${(m.y + i) * H + (H >> 1)}`)],
		{ encoding: "utf8", maxBuffer: 1 << 26 }).trim().split("\n");
	const hex = (c) => "#" + c.map((v) => v.toString(16).padStart(2, "0")).join("");
	const tol = im.proto === "sixel" ? 1 : 0;
	let bad = 0;
	pts.forEach(([i, j], k) => {
		const got = im.at(Math.floor(j * b + b / 2), Math.floor(i * b + b / 2));
		const want = png[k].slice(1).match(/../g).map((h) => parseInt(h, 16));
		const ansi = m.at(i, j);
		const ok = !ansi ? !got || got === "background" // masked: no colour in either
			: got && got !== "background" && got.every((v, c) => Math.abs(v - want[c]) <= tol) && ansi.every((v, c) => v === want[c]);
		if (!ok && bad++ < 5) console.log(`  pair ${i},${j}: image ${got && got.join ? hex(got) : got}, png ${png[k]}, ansi ${ansi ? hex(ansi) : ansi}`);
	});
	console.log(`${pts.length} pairs, ${bad} differ`);
} else if (cmd === "same") { // the last image of A and the first of B, N blocks a side, block centre by centre
	const [a, b, nArg] = args, n = Number(nArg);
	const ia = images(readFileSync(a, "utf8")).images.at(-1), ib = images(readFileSync(b, "utf8")).images[0];
	if (!ia || !ib) throw new Error("no image");
	const ba = ia.w / n, bb = ib.w / n;
	let bad = 0;
	for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
		const ca = ia.at(Math.floor(j * ba + ba / 2), Math.floor(i * ba + ba / 2)), cb = ib.at(Math.floor(j * bb + bb / 2), Math.floor(i * bb + bb / 2));
		if (JSON.stringify(ca) !== JSON.stringify(cb) && bad++ < 5) console.log(`  pair ${i},${j}: ${JSON.stringify(ca)} vs ${JSON.stringify(cb)}`);
	}
	console.log(`${ia.proto} ${ia.w}x${ia.h} vs ${ib.proto} ${ib.w}x${ib.h}: ${n * n} pairs, ${bad} differ`);
} else if (cmd === "screen") { // a screenshot of a real terminal against the SVG's rendering
	const [shot, x0s, y0s, bs, ansiFile, pngFile, cw, ch] = args;
	const X0 = Number(x0s), Y0 = Number(y0s), B = Number(bs), W = Number(cw), H = Number(ch);
	const m = ansiMatrix(readFileSync(ansiFile, "utf8"));
	const pts = [];
	for (let i = 0; i < m.n; i++) for (let j = 0; j < m.n; j++) pts.push([i, j]);
	const tool = join(dirname(fileURLToPath(import.meta.url)), "png-pixels.mjs");
	const run = (file, list) => execFileSync(process.execPath, [tool, file, ...list], { encoding: "utf8", maxBuffer: 1 << 26 }).trim().split("\n");
	const want = run(pngFile, pts.map(([i, j]) => `${(m.x + 2 * j) * W + W},${(m.y + i) * H + (H >> 1)}`));
	const got = run(shot, pts.map(([i, j]) => `${X0 + j * B + (B >> 1)},${Y0 + i * B + (B >> 1)}`));
	const rgb = (h) => h.slice(1).match(/../g).map((v) => parseInt(v, 16));
	let bad = 0;
	pts.forEach(([i, j], k) => {
		const ok = rgb(got[k]).every((v, c) => Math.abs(v - rgb(want[k])[c]) <= 2);
		if (!ok && bad++ < 5) console.log(`  pair ${i},${j}: screen ${got[k]}, svg ${want[k]}`);
	});
	console.log(`${pts.length} pairs, ${bad} differ`);
} else if (cmd === "overlap") { // text written over an image's cells erases its pixels
	const [streamFile, cw, ch] = args;
	const { images: ims, textCells } = images(readFileSync(streamFile, "utf8"));
	const W = Number(cw), H = Number(ch);
	const over = textCells.filter(([r, c]) => ims.some((g) => r >= g.row && c >= g.col && r < g.row + Math.ceil(g.h / H) &&
		c < g.col + Math.ceil(g.w / W)));
	console.log(`${ims.length} images, ${textCells.length} text cells, ${over.length} over images`);
} else {
	console.error("usage: term-images.mjs list STREAM | compare STREAM ANSI PNG CELL_W CELL_H [IMAGE]");
	process.exit(2);
}
