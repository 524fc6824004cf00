"""A byte-pipe child for the stdio proxy stress test (not an MCP server): echoes every
stdin line to stdout unchanged and flushes each one.

  python echo_lines.py [--die-after N]

With --die-after N it SIGKILLs itself after echoing N lines (a server crash mid-stream).
"""

import os
import signal
import sys


def main() -> int:
    die_after = None
    if len(sys.argv) == 3 and sys.argv[1] == "--die-after":
        die_after = int(sys.argv[2])
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    n = 0
    for line in inp:
        out.write(line)
        out.flush()
        n += 1
        if die_after is not None and n >= die_after:
            os.kill(os.getpid(), signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
