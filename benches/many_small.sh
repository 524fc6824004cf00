#!/usr/bin/env bash
# Many small messages (issue 22), side by side in one run: serde_json::Value
# per line, sonic-rs per line, a memchr line count, `mcptape check` and
# `mcptape inspect` on one generated transcript, each as its own process
# timed by /usr/bin/time (wall time, peak RSS), and `mcptape serve` until its
# first answer (`many_small first-answer`: seconds from the spawn to the
# answer to the recorded `initialize`, served with `--latency fixed:0ms` so
# the recorded server's own delay is not counted; serve's peak RSS and CPU
# seconds then).
#
#   benches/many_small.sh [FILE] [MESSAGES]
#
# FILE (default target/many_small.jsonl) is generated when missing by
# `cargo run --release -p mcptape-benches --example many_small -- gen FILE
# --messages MESSAGES` (default 500,000 messages, about 295 MB).
# MCPTAPE (default target/release/mcptape) is the binary measured;
# MCPTAPE_BEFORE, when set, adds rows for another binary (an older build).
# SERVE=0 leaves the serve rows out.
# ROUNDS (default 1): each row is run ROUNDS times, round-robin, and the
# fastest wall time (with its peak RSS) is printed.
# GB/s = file bytes / wall seconds / 10^9; CPU s = user + system seconds of
# the process (for the serve rows: serve's own, up to its first answer).
# Run from the workspace root.
set -euo pipefail

file=${1:-target/many_small.jsonl}
messages=${2:-500000}
rounds=${ROUNDS:-1}
mcptape=${MCPTAPE:-target/release/mcptape}
before=${MCPTAPE_BEFORE:-}

cargo build --release -q -p mcptape-benches --example many_small
tool=target/release/examples/many_small
[ -x "$mcptape" ] || cargo build --release -q -p mcptape
if [ ! -s "$file" ]; then
    "$tool" gen "$file" --messages "$messages"
fi
bytes=$(stat -c %s "$file")
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$file")
# Written back before the first row: a file just written (1-3 GB of dirty pages) slowed the
# rows timed while the kernel wrote it out 2-3x (benches/README.md, after the thirteenth round).
sync
cat "$file" > /dev/null # page cache warm for every row

rows=(
    "serde_json::Value per line|$tool serde $file"
    "sonic_rs::Value per line|$tool sonic $file"
    "memchr line count|$tool memchr $file"
)
if [ -n "$before" ]; then
    rows+=("mcptape check (before)|$before check $file")
    rows+=("mcptape inspect (before)|$before inspect $file")
    [ "${SERVE:-1}" = 0 ] || rows+=("mcptape serve, first answer (before)|$tool first-answer $before $file")
fi
rows+=("mcptape check|$mcptape check $file")
rows+=("mcptape inspect|$mcptape inspect $file")
[ "${SERVE:-1}" = 0 ] || rows+=("mcptape serve, first answer|$tool first-answer $mcptape $file")

declare -A best_s best_kib best_cpu
timing=$(mktemp)
trap 'rm -f "$timing"' EXIT
for ((r = 1; r <= rounds; r++)); do
    for row in "${rows[@]}"; do
        name=${row%%|*}
        cmd=${row#*|}
        case $name in
            # It prints serve's own figures in the same format.
            *"first answer"*) $cmd > "$timing" 2> /dev/null || echo "TIME 0 0" > "$timing" ;;
            *) /usr/bin/time -o "$timing" -f 'TIME %e %M %U %S' $cmd > /dev/null 2>&1 || true ;;
        esac
        out=$(grep '^TIME' "$timing")
        s=$(echo "$out" | awk '{print $2}')
        kib=$(echo "$out" | awk '{print $3}')
        cpu=$(echo "$out" | awk '{ if (NF >= 5) printf "%.2f", $4 + $5; else print "—" }')
        if [ -z "${best_s[$name]:-}" ] || awk -v a="$s" -v b="${best_s[$name]}" 'BEGIN { exit !(a < b) }'; then
            best_s[$name]=$s
            best_kib[$name]=$kib
            best_cpu[$name]=$cpu
        fi
    done
done

echo "file: $file, $bytes bytes, $(wc -l < "$file") lines, longest line $longest bytes; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| reader | wall s | CPU s | GB/s | peak RSS MB |"
echo "|---|---:|---:|---:|---:|"
for row in "${rows[@]}"; do
    name=${row%%|*}
    awk -v n="$name" -v s="${best_s[$name]}" -v c="${best_cpu[$name]}" -v k="${best_kib[$name]}" -v b="$bytes" \
        'BEGIN { printf "| %s | %.2f | %s | %.3f | %.0f |\n", n, s, c, (s > 0 ? b / s / 1e9 : 0), k * 1024 / 1e6 }'
done
