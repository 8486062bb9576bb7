#!/usr/bin/python3
"""fake-term.py -- run a program in a pseudo-terminal that answers like a graphics terminal would.

A test harness for pixel heatmaps: the explorer asks the terminal (graphics.h) for kitty graphics
(a query image), its cell size (CSI 16 t) and its device attributes (DA1, CSI c). This terminal
answers as told, types the keys of a script, and saves everything the program wrote.

  fake-term.py [--answer sixel|kitty|plain|none] [--pixels WxH] [--size COLSxROWS]
               --out FILE [--log FILE] -- COMMAND ARGS... ::: STEP...

Answers: sixel = DA1 with attribute 4; kitty = the query image "OK" and DA1 without 4; plain = DA1
without 4; none = no answer at all. --pixels sets the pixel size the kernel reports for the window
(default 0x0: unknown, so the program asks with CSI 16 t and gets cells of 10x20).
Steps: "key:TEXT" types TEXT ("\\r" for Enter, "\\e" for Escape), "sleep:S" waits S seconds,
"wait:TEXT" waits (at most 10 s) until TEXT has been written since the last step. The log has one
line per event with the time since the start: "T asked", "T answered", "T key ...", "T exit".
"""
import fcntl
import os
import pty
import select
import struct
import sys
import termios
import time


def main():
    argv = sys.argv[1:]
    opts = {"--answer": "sixel", "--pixels": "0x0", "--size": "100x40", "--out": None, "--log": None}
    while argv and argv[0] != "--":
        opts[argv[0]] = argv[1]
        argv = argv[2:]
    argv = argv[1:]
    sep = argv.index(":::") if ":::" in argv else len(argv)
    cmd, steps = argv[:sep], argv[sep + 1:]
    cols, rows = map(int, opts["--size"].split("x"))
    pw, ph = map(int, opts["--pixels"].split("x"))
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"
        os.environ.pop("TMUX", None)
        os.execvp(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, pw * cols, ph * rows))
    start = time.monotonic()
    out = bytearray()
    log = []
    answer = opts["--answer"]

    def stamp(what):
        log.append("%.3f %s" % (time.monotonic() - start, what))

    def pump(timeout):
        """Read what the program writes for up to TIMEOUT seconds; answer its questions."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return True
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return True
            try:
                data = os.read(fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            seen = len(out)
            out.extend(data)
            tail = bytes(out[max(0, seen - 64):])
            if b"\x1b[c" in tail and tail.rfind(b"\x1b[c") + max(0, seen - 64) >= seen - 2:
                stamp("asked")
                reply = b""
                if answer == "kitty" and b"\x1b_Gi=31," in bytes(out[max(0, seen - 256):]):
                    reply += b"\x1b_Gi=31;OK\x1b\\"
                if b"\x1b[16t" in bytes(out[max(0, seen - 256):]) and answer != "none":
                    reply += b"\x1b[6;20;10t"
                if answer == "sixel":
                    reply += b"\x1b[?62;4;22c"
                elif answer in ("kitty", "plain"):
                    reply += b"\x1b[?62;22c"
                if reply:
                    os.write(fd, reply)
                    stamp("answered")

    alive = pump(1.0)
    mark = len(out)
    for step in steps:
        kind, _, arg = step.partition(":")
        if kind == "key":
            stamp("key " + arg)
            os.write(fd, arg.replace("\\r", "\r").replace("\\e", "\x1b").encode())
            mark = len(out)
            alive = pump(0.3) and alive
        elif kind == "sleep":
            alive = pump(float(arg)) and alive
        elif kind == "wait":
            end = time.monotonic() + 10
            while arg.encode() not in bytes(out[mark:]) and time.monotonic() < end and alive:
                alive = pump(0.1)
            stamp(("seen " if arg.encode() in bytes(out[mark:]) else "missed ") + arg)
            mark = len(out)
    # Quit and collect the rest.
    try:
        os.write(fd, b"Q")
    except OSError:
        pass
    pump(2.0)
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        status = 0
    stamp("exit %d" % (os.waitstatus_to_exitcode(status)))
    with open(opts["--out"], "wb") as f:
        f.write(out)
    if opts["--log"]:
        with open(opts["--log"], "w") as f:
            f.write("\n".join(log) + "\n")


if __name__ == "__main__":
    main()
