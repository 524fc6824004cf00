"""Byte tap for tests: runs CMD, copying this process's stdin to CMD's stdin and CMD's
stdout to this process's stdout unchanged, and logs both byte streams to files.

  python tap.py --c2s FILE --s2c FILE -- CMD ARGS...

Placed between a real MCP client and `mcptape record` (what the client saw) and between
`mcptape record` and the real server (what the server saw), so a test can assert that
both sides' bytes equal the transcript's messages. stderr is inherited. When stdin ends,
CMD's stdin is closed; SIGTERM/SIGINT/SIGHUP are forwarded to CMD; the tap exits the way
CMD did (same code, or the same signal).
"""

import os
import signal
import subprocess
import sys
import threading

CHUNK = 65536


def main() -> int:
    args = sys.argv[1:]
    c2s_path = s2c_path = None
    while args and args[0] != "--":
        if args[0] == "--c2s":
            c2s_path = args[1]
        elif args[0] == "--s2c":
            s2c_path = args[1]
        else:
            sys.exit(f"tap.py: unknown option {args[0]}")
        args = args[2:]
    cmd = args[1:]
    if not cmd or not c2s_path or not s2c_path:
        sys.exit("usage: tap.py --c2s FILE --s2c FILE -- CMD ARGS...")
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def forward(sig, _frame):
        try:
            child.send_signal(sig)
        except ProcessLookupError:
            pass

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, forward)

    def pump_in():
        with open(c2s_path, "wb", buffering=0) as log:
            fd = sys.stdin.buffer.fileno()
            while True:
                try:
                    data = os.read(fd, CHUNK)
                except OSError:
                    break
                if not data:
                    break
                log.write(data)
                try:
                    child.stdin.write(data)
                except (BrokenPipeError, OSError):
                    pass
        try:
            child.stdin.close()
        except OSError:
            pass

    threading.Thread(target=pump_in, daemon=True).start()
    out_fd = sys.stdout.buffer.fileno()
    with open(s2c_path, "wb", buffering=0) as log:
        while True:
            data = child.stdout.read(CHUNK)
            if not data:
                break
            log.write(data)
            view = memoryview(data)
            try:
                while view:
                    n = os.write(out_fd, view)
                    view = view[n:]
            except (BrokenPipeError, OSError):
                pass
    code = child.wait()
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main())
