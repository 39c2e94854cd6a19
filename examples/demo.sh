#!/usr/bin/env bash
# The main job: ingest the bundled examples (three chats, a lab transcript, a robot grasp log)
# into an embedded SQLite memory and ask it what is true now, what was true then, and why.
# No model and no server: the rules and structured extractors run offline.
#
#   bash examples/demo.sh                      # store: ./graphmem-demo.db (re-runs add nothing)
#   GRAPHMEM_STORE=sqlite:///other.db bash examples/demo.sh
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export GRAPHMEM_STORE="${GRAPHMEM_STORE:-sqlite:///graphmem-demo.db}"
if command -v graphmem >/dev/null 2>&1; then
  gm=(graphmem)
else
  gm=("${PYTHON:-python3}" -m graphmem.cli)
fi

if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s$ graphmem %s%s\n' "$bold" "$*" "$plain"; "${gm[@]}" "$@"; }

step init
step ingest "$here/data"
step facts --entity Maya
step facts --entity Leo --history
step history Maya --predicate lives_in
step recall "where does Maya live?" --context
step recall "where does Maya live?" --as-of 2024-02-01 -k 3
step recall "mug grasps" -k 8 --filter success=true --filter "params.force_peak<13"
step stats
