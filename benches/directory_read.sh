#!/usr/bin/env bash
# Issue 12, "large replies at memory speed": the seed's directory read (40 x 3 MB mockups,
# 160,000,000 base64 characters in one resources/read reply) replayed by `mcptape bench` over
# stdio (embedded `mcptape serve` child, --latency fixed:0ms), beside the time a plain pipe
# needs to move the same reply bytes.
#
# Usage: benches/directory_read.sh [TRANSCRIPT] (default target/directory-read-session.jsonl,
# written by the directory_read example when missing). RUNS=N repeats each measurement
# (default 3); READS=N reads per bench (default 3); BIN=path runs another build (default target/release/mcptape). Needs a release
# build: cargo build --release -p mcptape.
#
# Prints, per run: the plain-pipe time (`cat REPLY | wc -c`, the reply message's bytes from
# the page cache through one pipe of the default 64 KiB; median of 5), the same pipe grown to
# 1 MiB as `serve` grows its stdout (`F_SETPIPE_SZ`, mcptape_transport::child::PIPE_BYTES;
# `cat REPLY` into a pipe read by a Python reader in 1 MiB reads, timed from the spawn of `cat`
# to the last byte; median of 5; "refused" when the kernel refuses the size), each bench's
# read p50/max in ms and its ratio to both pipe times, timeouts, and peak RSS (VmHWM) of the two processes apart: the client (the `mcptape
# bench` process) and the embedded server (its `mcptape serve` child). /usr/bin/time -v's
# "Maximum resident set size" is also shown: it is the larger of the two (wait4 folds the
# waited-for child in).
set -euo pipefail
cd "$(dirname "$0")/.."
FILE=${1:-target/directory-read-session.jsonl}
RUNS=${RUNS:-3}
READS=${READS:-3}
BIN=${BIN:-target/release/mcptape}
[ -x "$BIN" ] || { echo "build first: cargo build --release -p mcptape" >&2; exit 2; }
if [ ! -f "$FILE" ]; then
    cargo run --release -q -p mcptape-check --example directory_read -- --session "$FILE"
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
REPLY="$WORK/reply.json"
# The reply as the server writes it: the last record's `msg`, one line.
python3 - "$FILE" "$REPLY" <<'PY'
import sys
line = open(sys.argv[1], 'rb').read().rstrip(b'\n').rsplit(b'\n', 1)[-1]
key = b'"msg":'
msg = line[line.index(key) + len(key):-1]
open(sys.argv[2], 'wb').write(msg + b'\n')
PY
SIZE=$(stat -c %s "$REPLY")
echo "transcript $FILE; reply $SIZE bytes"
cat "$REPLY" > /dev/null # into the page cache

now_ns() { date +%s%N; }

# Peak RSS (VmHWM, kB) and current RSS (VmRSS, kB) of pid $1, empty once it is gone.
hwm() { awk '/^VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || true; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || true; }

# One bench run: prints "p50_ms max_ms n timeouts client_kB serve_kB time_kB client_run_kB
# engine_p50_ms engine_max_ms p99_ms cpu_s [val_p50_ms val_max_ms]"; client_run_kB is the client's largest
# VmRSS sampled once its serve child exists (the transcript loaded: the handshake and the
# reads); engine is the serve child's own time per reply (request line read -> reply written,
# the write included: it blocks while the client reads the pipe), from its --stats.
bench_once() {
    local out="$WORK/out-$RANDOM" extra=("$@")
    /usr/bin/time -v -o "$WORK/time.txt" "$BIN" bench "$FILE" --latency fixed:0ms --reads "$READS" \
        --turns 0 --out "$out" "${extra[@]}" > "$WORK/bench.txt" 2>&1 &
    local tpid=$! bpid="" spid="" cmax=0 smax=0 crun=0
    while kill -0 "$tpid" 2>/dev/null; do
        [ -n "$bpid" ] || bpid=$(pgrep -P "$tpid" | head -1 || true)
        if [ -n "$bpid" ]; then
            [ -n "$spid" ] || spid=$(pgrep -P "$bpid" | head -1 || true)
            local c; c=$(hwm "$bpid"); [ "${c:-0}" -gt "$cmax" ] && cmax=$c
            if [ -n "$spid" ]; then
                local s; s=$(hwm "$spid"); [ "${s:-0}" -gt "$smax" ] && smax=$s
                local cr; cr=$(rss "$bpid"); [ "${cr:-0}" -gt "$crun" ] && crun=$cr
            fi
        fi
        sleep 0.02
    done
    wait "$tpid" || { cat "$WORK/bench.txt" >&2; return 1; }
    local tkb; tkb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
    local cpu; cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$WORK/time.txt")
    python3 - "$out/report.json" "$cmax" "$smax" "$tkb" "$crun" "$cpu" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
q = r["single"]
timeouts = r["singlePhase"]["timedOut"]
fields = [q["p50Us"] / 1000, q["maxUs"] / 1000, q["count"], timeouts,
          int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])]
e = (r.get("server") or {}).get("engine") or {}
fields += [e.get("p50Us", 0) / 1000, e.get("maxUs", 0) / 1000, q["p99Us"] / 1000, float(sys.argv[6])]
v = r.get("validation")
if v:
    fields += [v["p50Us"] / 1000, v["maxUs"] / 1000]
print(" ".join(str(f) for f in fields))
PY
}

# The reply through one pipe of $1 bytes (0: the default size), into a 1 MiB buffer; prints ms,
# or "refused" when F_SETPIPE_SZ is refused.
pipe_sized() {
    python3 - "$REPLY" "$1" <<'PY'
import fcntl, os, subprocess, sys, time
path, size = sys.argv[1], int(sys.argv[2])
r, w = os.pipe()
if size:
    try:
        fcntl.fcntl(w, 1031, size)  # F_SETPIPE_SZ
    except OSError:
        print("refused"); sys.exit(0)
buf = memoryview(bytearray(1 << 20))
src = os.fdopen(r, "rb", buffering=0)
t0 = time.perf_counter_ns()
cat = subprocess.Popen(["cat", path], stdout=w)
os.close(w)
n = 0
while True:
    k = src.readinto(buf)
    if not k:
        break
    n += k
t1 = time.perf_counter_ns()
cat.wait()
print("%.1f" % ((t1 - t0) / 1e6))
PY
}

for run in $(seq 1 "$RUNS"); do
    # The pipe figure: median of 5 (the machine may be shared), min and max beside it.
    pipes=()
    for _ in 1 2 3 4 5; do
        t0=$(now_ns); cat "$REPLY" | wc -c > /dev/null; t1=$(now_ns)
        pipes+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b - a) / 1e6}')")
    done
    read -r pipe_ms pmin pmax <<< "$(printf '%s\n' "${pipes[@]}" | sort -n | awk '{v[NR] = $1} END {print v[3], v[1], v[5]}')"
    echo "run $run: plain pipe (cat reply | wc -c, median of 5): $pipe_ms ms (min $pmin, max $pmax) for $SIZE bytes"
    big=()
    for _ in 1 2 3 4 5; do big+=("$(pipe_sized 1048576)"); done
    if [ "${big[0]}" = refused ]; then
        pipe1m=0
        echo "  1 MiB pipe: refused by the kernel (F_SETPIPE_SZ)"
    else
        read -r pipe1m bmin bmax <<< "$(printf '%s\n' "${big[@]}" | sort -n | awk '{v[NR] = $1} END {print v[3], v[1], v[5]}')"
        echo "  1 MiB pipe (cat reply into F_SETPIPE_SZ 1 MiB, as serve's stdout; median of 5): $pipe1m ms (min $bmin, max $bmax)"
    fi
    for mode in plain validate; do
        if [ "$mode" = validate ]; then set -- --validate; else set --; fi
        read -r p50 max n timeouts ckb skb tkb crun ep50 emax p99 cpu vp50 vmax <<< "$(bench_once "$@")"
        awk -v m="$mode" -v p50="$p50" -v max="$max" -v n="$n" -v to="$timeouts" \
            -v p99="$p99" -v cpu="$cpu" -v pipe="$pipe_ms" -v pipe1m="$pipe1m" -v ckb="$ckb" -v skb="$skb" -v tkb="$tkb" -v size="$SIZE" -v crun="$crun" -v ep50="$ep50" -v emax="$emax" \
            -v vp50="${vp50:-}" -v vmax="${vmax:-}" 'BEGIN {
            printf "  bench %-8s n=%d timeouts=%d read p50 %.1f ms, max %.1f ms = %.2fx / %.2fx the pipe", m, n, to, p50, max, p50 / pipe, max / pipe
            if (pipe1m > 0) printf " (%.2fx / %.2fx the 1 MiB pipe)", p50 / pipe1m, max / pipe1m
            printf "; p99 %.1f ms; CPU %.2f s (whole run, user+sys, client and serve child)", p99, cpu
            if (vp50 != "") printf "; validation p50 %.1f ms, max %.1f ms", vp50, vmax
            printf "; serve engine p50 %.1f ms, max %.1f ms", ep50, emax
            printf "\n    peak RSS: client (bench) %.0f MB = %.2fx the reply (%.0f MB = %.2fx once loaded: handshake + reads); server (serve child) %.0f MB; /usr/bin/time max %.0f MB\n", ckb / 1024, ckb * 1024 / size, crun / 1024, crun * 1024 / size, skb / 1024, tkb / 1024
        }'
    done
done
