# lib.sh -- helpers for screen tests that drive attnscope inside a detached tmux server.
#
# Each test script sources this, calls tui_start with a command, then sends keys and waits for
# text on the screen (polling capture-pane, never fixed sleeps). The tmux server is private to
# the script (its own socket) and killed on exit.

command -v tmux >/dev/null 2>&1 || { echo "tmux not installed: skipping"; exit 77; }

TUI_TMP=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-tui.XXXXXX")
TUI_N=0
TUI_SOCK="$TUI_TMP/tmux.0.sock"
TUI_STEP=0
cat >"$TUI_TMP/tmux.conf" <<'CONF'
set -g default-terminal tmux-256color
set -g remain-on-exit on
set -g status off
set -g escape-time 0
CONF

tui_tmux() { tmux -S "$TUI_SOCK" -f "$TUI_TMP/tmux.conf" "$@"; }

tui_cleanup() {
	for sock in "$TUI_TMP"/tmux.*.sock; do
		[ -S "$sock" ] && tmux -S "$sock" kill-server >/dev/null 2>&1
	done
	rm -rf "$TUI_TMP"
}
trap tui_cleanup EXIT

# tui_start W H ENV... -- COMMAND...: run COMMAND in a W×H pane with the environment settings.
# Each start gets its own tmux server (a fresh socket), so no server is reused while it exits.
tui_start() {
	w=$1 h=$2
	shift 2
	tui_tmux kill-server >/dev/null 2>&1
	TUI_N=$((TUI_N + 1))
	TUI_SOCK="$TUI_TMP/tmux.$TUI_N.sock"
	TUI_STATUS="$TUI_TMP/status.$TUI_N"
	# Quote every word for the shell tmux runs the command with.
	cmd=
	for a in "$@"; do
		cmd="$cmd '$(printf '%s' "$a" | sed "s/'/'\\\''/g")'"
	done
	# The exit status goes to a file: more reliable than asking tmux about a dead pane.
	tui_tmux new-session -d -x "$w" -y "$h" \
		"env XDG_CONFIG_HOME='$TUI_TMP/config' $cmd; echo \$? >'$TUI_STATUS'"
}

tui_screen() { tui_tmux capture-pane -p -t 0; }
tui_screen_ansi() { tui_tmux capture-pane -p -e -t 0; }
tui_keys() { tui_tmux send-keys -t 0 "$@"; }
tui_type() { tui_tmux send-keys -t 0 -l "$1"; }

tui_fail() {
	echo "FAIL (step $TUI_STEP): $*"
	echo "----- screen -----"
	tui_screen
	echo "------------------"
	exit 1
}

# tui_wait TEXT [SECONDS]: wait until TEXT (fixed string) is on the screen.
tui_wait() {
	TUI_STEP=$((TUI_STEP + 1))
	limit=$(( ${2:-10} * 10 ))
	i=0
	while [ $i -lt $limit ]; do
		tui_screen | grep -F -q -- "$1" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	tui_fail "'$1' did not appear"
}

# tui_wait_gone TEXT [SECONDS]: wait until TEXT is no longer on the screen.
tui_wait_gone() {
	TUI_STEP=$((TUI_STEP + 1))
	limit=$(( ${2:-10} * 10 ))
	i=0
	while [ $i -lt $limit ]; do
		tui_screen | grep -F -q -- "$1" || return 0
		sleep 0.1
		i=$((i + 1))
	done
	tui_fail "'$1' is still there"
}

# tui_line N: line N (1-based) of the screen.
tui_line() { tui_screen | sed -n "${1}p"; }

# tui_wait_true DESCRIPTION COMMAND...: wait until COMMAND succeeds (it may read the screen).
tui_wait_true() {
	TUI_STEP=$((TUI_STEP + 1))
	what=$1
	shift
	i=0
	while [ $i -lt 100 ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	tui_fail "$what"
}

# tui_width_is N: the rule under the token strip (line 5) is N columns wide, i.e. the program
# has redrawn for a terminal N columns wide.
tui_width_is() { [ "$(tui_line 5 | LC_ALL=C.UTF-8 wc -m)" -eq $(($1 + 1)) ]; }

# tui_exit_status: wait for the program to end and print its exit status.
tui_exit_status() {
	i=0
	while [ $i -lt 100 ]; do
		if [ -s "$TUI_STATUS" ]; then
			cat "$TUI_STATUS"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	echo "still running"
}
