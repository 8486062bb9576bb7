#!/bin/sh
# pixels-xterm.sh -- pixel heatmaps in a real terminal: xterm in VT340 mode (sixel) on a virtual X
# server (Xvfb). The explorer, started with --pixels auto, must find sixel by asking xterm, and the
# screenshot of the heatmap it draws (xwd) must show every token pair in the colour the SVG of the
# same heatmap renders to, and the text layout must match what the pseudo-terminal test saw. Skipped
# (77) without Xvfb, xterm, xdotool, xwd and netpbm (tools/install-deps installs them).
set -u
BIN=${ATTNSCOPE_BIN:-./attnscope}
SRC=${top_srcdir:-.}
M=$SRC/tests/data/models
for tool in Xvfb xterm xdotool xwd xwdtopnm pnmtopng node rsvg-convert; do
	command -v $tool >/dev/null || { echo "pixels-xterm.sh: SKIP: no $tool"; exit 77; }
done
case "$BIN" in /*) ;; *) BIN=$PWD/$BIN ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-xterm-XXXXXX")
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
TEXT="The cat sat on the mat."
# A display nobody uses.
d=70
while [ -e "/tmp/.X11-unix/X$d" ] || [ -e "/tmp/.X$d-lock" ]; do d=$((d + 1)); done
Xvfb ":$d" -screen 0 1000x800x24 -nolisten tcp >"$TMP/xvfb.log" 2>&1 &
XPID=$!
trap 'kill $XPID 2>/dev/null; rm -rf "$TMP"' EXIT
export DISPLAY=":$d"
for i in 1 2 3 4 5 6 7 8 9 10; do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.5; done
cat >"$TMP/winsz.py" <<'PY'
import fcntl, struct, sys, termios
r, c, xp, yp = struct.unpack("HHHH", fcntl.ioctl(0, termios.TIOCGWINSZ, b"\0" * 8))
open(sys.argv[1], "w").write("%d %d %d %d\n" % (c, r, xp, yp))
PY
xterm -ti vt340 -tn xterm-256color -xrm 'XTerm*numColorRegisters: 256' -xrm 'XTerm*allowSendEvents: true' \
	-b 0 -fa Monospace -fs 10 -geometry 100x40+0+0 -bg black -fg white \
	-e sh -c "/usr/bin/python3 '$TMP/winsz.py' '$TMP/ws'; '$BIN' -m '$M/bert-mini' --layer 1 --head 1 --pixels auto '$TEXT'; echo \$? >'$TMP/status'" &
for i in $(seq 1 40); do [ -s "$TMP/ws" ] && break; sleep 0.25; done
sleep 2
W=$(xdotool search --class xterm | head -1)
xdotool key --window "$W" Return 2>/dev/null
sleep 2
xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng >"$TMP/shot.png"
xdotool key --window "$W" Q 2>/dev/null
for i in $(seq 1 20); do [ -s "$TMP/status" ] && break; sleep 0.25; done
read -r cols rows xpix ypix <"$TMP/ws"
cw=$((xpix / cols)) ch=$((ypix / rows))
if [ "$cw" -gt 2 ] && [ "$ch" -gt 2 ]; then ok; else bad "xterm reports cells of ${cw}x${ch}"; fi
if [ "$(cat "$TMP/status" 2>/dev/null)" = 0 ]; then ok; else bad "the explorer in xterm exited with '$(cat "$TMP/status" 2>/dev/null)'"; fi
# Where the image lands and its block size: what the same run draws in a pseudo-terminal of that size.
/usr/bin/python3 "$SRC/tests/tools/fake-term.py" --answer sixel --pixels "${cw}x${ch}" --size "${cols}x${rows}" \
	--out "$TMP/fake.out" --log "$TMP/fake.log" -- "$BIN" -m "$M/bert-mini" --layer 1 --head 1 --pixels auto "$TEXT" \
	::: sleep:0.5 key:\\r wait:queries
set -- $(node "$SRC/tests/tools/term-images.mjs" list "$TMP/fake.out" | sed -n '1s/^sixel \([0-9]*\)x[0-9]* at \([0-9]*\),\([0-9]*\)$/\1 \2 \3/p')
if [ $# -eq 3 ]; then
	ok
	block=$(($1 / 9)) x0=$(($3 * cw)) y0=$(($2 * ch))
	COLORTERM=truecolor "$BIN" -m "$M/bert-mini" --print heatmap --layer 1 --head 1 --color always --width 100 "$TEXT" >"$TMP/h.ansi" 2>/dev/null
	"$BIN" -m "$M/bert-mini" --print heatmap --layer 1 --head 1 --format svg --width 100 "$TEXT" >"$TMP/h.svg" 2>/dev/null
	rsvg-convert "$TMP/h.svg" -o "$TMP/h.png"
	res=$(node "$SRC/tests/tools/term-images.mjs" screen "$TMP/shot.png" $x0 $y0 $block "$TMP/h.ansi" "$TMP/h.png" 9 18 2>&1)
	case "$res" in
	"81 pairs, 0 differ") ok ;;
	*) bad "xterm's pixels: $res"; cp "$TMP/shot.png" "${TMPDIR:-/tmp}/attnscope-xterm-shot.png" ;;
	esac
else
	bad "no image in the pseudo-terminal run"
fi
echo "pixels-xterm.sh: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
