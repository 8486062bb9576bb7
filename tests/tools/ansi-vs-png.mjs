// ansi-vs-png.mjs -- does a PNG rendering of an SVG figure show, cell by cell, the colours the same view
// writes to a 24-bit terminal? For every character cell of the ANSI text (--print VIEW --color always at
// COLORTERM=truecolor) that has a colour of its own, the pixel at the cell's centre in the PNG (cells of
// CELL_W × CELL_H pixels) that holds no glyph must be that background; for the half block ▀ (two stacked heatmap values) the
// upper half's centre is the foreground and the lower half's the background.
// Usage: node ansi-vs-png.mjs FILE.ansi FILE.png CELL_W CELL_H → "N cells, M differ" (+ the first few).
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const [ansiFile, pngFile, cw, ch] = process.argv.slice(2);
const W = Number(cw), H = Number(ch);
const hex = (r, g, b) => "#" + [r, g, b].map((v) => v.toString(16).padStart(2, "0")).join("");
const want = []; // [x, y, colour]
readFileSync(ansiFile, "utf8").split("\n").forEach((line, y) => {
	let fg = null, bg = null, x = 0;
	for (let i = 0; i < line.length;) {
		if (line[i] === "\x1b" && line[i + 1] === "[") {
			const end = line.indexOf("m", i);
			const p = line.slice(i + 2, end).split(";").map(Number);
			for (let k = 0; k < p.length; k++) {
				if (p[k] === 0) fg = bg = null;
				else if ((p[k] === 38 || p[k] === 48) && p[k + 1] === 2) {
					const c = hex(p[k + 2], p[k + 3], p[k + 4]);
					if (p[k] === 38) fg = c; else bg = c;
					k += 4;
				} else if (p[k] === 39) fg = null;
				else if (p[k] === 49) bg = null;
			}
			i = end + 1;
			continue;
		}
		const cp = line.codePointAt(i);
		if (cp === 0x2580 && fg && bg) {
			want.push([x * W + (W >> 1), y * H + (H >> 2), fg]);
			want.push([x * W + (W >> 1), y * H + ((3 * H) >> 2), bg]);
		} else if (bg && cp === 0x20) { // a glyph over its colour would hide the centre
			want.push([x * W + (W >> 1), y * H + (H >> 1), bg]);
		}
		i += cp > 0xffff ? 2 : 1;
		x++;
	}
});
const tool = join(dirname(fileURLToPath(import.meta.url)), "png-pixels.mjs");
const got = execFileSync(process.execPath, [tool, pngFile, ...want.map(([x, y]) => `${x},${y}`)], {
	encoding: "utf8", maxBuffer: 1 << 26,
}).trim().split("\n");
const bad = want.filter((w, i) => got[i] !== w[2]);
console.log(`${want.length} cells, ${bad.length} differ`);
for (const [x, y, c] of bad.slice(0, 5)) console.log(`  pixel ${x},${y}: want ${c}, got ${got[want.findIndex((w) => w[0] === x && w[1] === y)]}`);
