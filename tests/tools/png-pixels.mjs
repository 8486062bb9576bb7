// png-pixels.mjs -- the colours of a PNG's pixels, for tests that check a rendered SVG at pixel level.
// Usage: node png-pixels.mjs FILE.png X,Y [X,Y ...]  → one "#rrggbb" per point (alpha ignored).
// Reads the 8-bit RGB/RGBA, non-interlaced PNGs rsvg-convert writes (filters 0-4), with node's own zlib.
import { readFileSync } from "node:fs";
import { inflateSync } from "node:zlib";

const [file, ...points] = process.argv.slice(2);
const png = readFileSync(file);
if (png.readUInt32BE(0) !== 0x89504e47) throw new Error(`${file}: not a PNG`);
let off = 8, width = 0, height = 0, channels = 0;
const idat = [];
while (off < png.length) {
	const len = png.readUInt32BE(off), type = png.toString("latin1", off + 4, off + 8);
	const data = png.subarray(off + 8, off + 8 + len);
	if (type === "IHDR") {
		width = data.readUInt32BE(0), height = data.readUInt32BE(4);
		const depth = data[8], colour = data[9], interlace = data[12];
		if (depth !== 8 || (colour !== 2 && colour !== 6) || interlace !== 0)
			throw new Error(`${file}: only 8-bit RGB/RGBA non-interlaced PNGs (depth ${depth}, colour ${colour})`);
		channels = colour === 6 ? 4 : 3;
	} else if (type === "IDAT") idat.push(data);
	else if (type === "IEND") break;
	off += 12 + len;
}
const raw = inflateSync(Buffer.concat(idat)), stride = width * channels;
const img = Buffer.alloc(height * stride);
for (let y = 0; y < height; y++) { // undo each row's filter (PNG spec 9.2)
	const f = raw[y * (stride + 1)], src = y * (stride + 1) + 1, dst = y * stride;
	for (let i = 0; i < stride; i++) {
		const a = i >= channels ? img[dst + i - channels] : 0, b = y > 0 ? img[dst - stride + i] : 0;
		const c = i >= channels && y > 0 ? img[dst - stride + i - channels] : 0;
		let p = raw[src + i];
		if (f === 1) p += a;
		else if (f === 2) p += b;
		else if (f === 3) p += (a + b) >> 1;
		else if (f === 4) {
			const q = a + b - c, pa = Math.abs(q - a), pb = Math.abs(q - b), pc = Math.abs(q - c);
			p += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
		}
		img[dst + i] = p & 0xff;
	}
}
for (const pt of points) {
	const [x, y] = pt.split(",").map(Number);
	const k = y * stride + x * channels;
	console.log("#" + [0, 1, 2].map((i) => img[k + i].toString(16).padStart(2, "0")).join(""));
}
