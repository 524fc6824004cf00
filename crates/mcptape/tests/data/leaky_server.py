"""A server that leaks, as real ones do at startup (issue 26): it prints its
argv, working directory, home, temp directory, the config file in its home
and a credential environment variable to stderr, then execs the real server
given after `--` (server-everything in record_redact.rs). Usage:
leaky_server.py ARGS... -- SERVER ARGV..."""

import json
import os
import sys
import tempfile

args = sys.argv[1:]
cut = args.index("--")
own, server = args[:cut], args[cut + 1 :]
err = sys.stderr
print("starting with argv: " + " ".join(own), file=err)
print("argv as list: " + repr(own), file=err)
print("cwd: " + os.getcwd(), file=err)
home = os.path.expanduser("~")
print("home: " + home, file=err)
print("tmp: " + tempfile.gettempdir() + "/leaky.sock", file=err)
with open(os.path.join(home, ".leaky.json")) as f:
    config = f.read().strip()
print("config: " + config, file=err)
print("config apiKey: " + json.loads(config)["apiKey"], file=err)
print("env GITHUB_TOKEN is " + os.environ.get("GITHUB_TOKEN", "unset"), file=err)
print("upstream header Authorization: Bearer " + os.environ.get("LEAKY_BEARER", ""), file=err)
print("connecting Server=db;Password=" + os.environ.get("LEAKY_DB_PASSWORD", "") + ";User=a", file=err)
err.flush()
os.execv(server[0], server)
