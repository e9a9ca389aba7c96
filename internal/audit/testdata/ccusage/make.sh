#!/bin/sh
# Expected values for the cost and date-view checks (internal/audit/ccusage_test.go), computed once
# with ccusage 20.0.24 and committed, so that the tests need neither npm nor the network:
#
#   CCU=$(mktemp -d) && cd $CCU && echo '{"private":true}' > package.json && npm install ccusage@20.0.24
#   sh internal/audit/testdata/ccusage/make.sh $CCU/node_modules/.bin/ccusage
#
# Each corpus is copied into a scratch CLAUDE_CONFIG_DIR (ccusage does not follow symbolic links);
# HOME is empty so that nothing else is read. Only the fields the tests compare are kept (jq).
set -eu
CCU=$1
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
mkdir -p "$S/home" "$S/sample/projects/spotter" "$S/sample/projects/claude-code-log"
cp -r "$ROOT/testdata/transcripts/spotter/test/fixtures/transcripts/." "$S/sample/projects/spotter/"
cp "$ROOT/testdata/transcripts/claude-code-log/test/test_data/edge_cases.jsonl" "$S/sample/projects/claude-code-log/"
cp -r "$HERE/../costcorpus" "$S/synthetic"
cp -r "$HERE/../recordedcost" "$S/recorded"
cp -r "$HERE/../aliascorpus" "$S/alias"
cp -r "$HERE/../btwcorpus" "$S/btw"
cp -r "$HERE/../tiecorpus" "$S/tie"
run() { # corpus name report args...
  corpus=$1 name=$2; shift 2
  HOME=$S/home CLAUDE_CONFIG_DIR=$S/$corpus CCUSAGE_MODEL_ALIASES=${ALIASES:-} "$CCU" claude "$@" --json --offline > "$S/out.json"
  case $1 in
  daily|monthly|weekly) jq -S '{rows: [(.daily // .monthly // .weekly)[] | {key: (.date // .month // .week), totalCost,
      inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens,
      models: [.modelBreakdowns[] | {modelName, cost, inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens}] | sort_by(.modelName)}],
      totals: .totals}' "$S/out.json" ;;
  session) jq -S '{rows: [.sessions[] | {key: .sessionId, totalCost, inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens}] | sort_by(.key), totals: .totals}' "$S/out.json" ;;
  blocks) jq -S '{rows: [.blocks[] | select(.isGap | not) | {key: .startTime, end: .endTime, totalCost: .costUSD, inputTokens: .tokenCounts.inputTokens,
      outputTokens: .tokenCounts.outputTokens, cacheCreationTokens: .tokenCounts.cacheCreationInputTokens, cacheReadTokens: .tokenCounts.cacheReadInputTokens, models}]}' "$S/out.json" ;;
  esac > "$HERE/$name.json"
  echo "$corpus $name: ${ALIASES:+CCUSAGE_MODEL_ALIASES='$ALIASES' }ccusage claude $* --json --offline" >> "$HERE/COMMANDS.txt"
}
: > "$HERE/COMMANDS.txt"
run sample sample-daily-utc daily -z UTC
run sample sample-monthly-utc monthly -z UTC
run sample sample-weekly-utc weekly -z UTC
run sample sample-session-utc session -z UTC
run sample sample-blocks-utc blocks -z UTC
run sample sample-daily-utc-0211-0212 daily -z UTC --since 20260211 --until 20260212
for tz in UTC America/New_York Asia/Tokyo Asia/Kolkata; do
  n=$(echo "$tz" | tr 'A-Z/' 'a-z-')
  run synthetic synthetic-daily-$n daily -z "$tz"
  run synthetic synthetic-weekly-$n weekly -z "$tz"
  run synthetic synthetic-monthly-$n monthly -z "$tz"
  run synthetic synthetic-blocks-$n blocks -z "$tz"
done
run synthetic synthetic-session-utc session -z UTC
run synthetic synthetic-daily-america-new_york-0201-0228 daily -z America/New_York --since 20260201 --until 20260228
# /btw replays of parent messages, one at the parent line's time and one later, in every report.
for report in daily weekly monthly session blocks; do
  run btw btw-$report $report -z UTC
done
# Weeks from Monday and from Wednesday.
run synthetic synthetic-weekly-america-new_york-monday weekly -z America/New_York --start-of-week monday
run synthetic synthetic-weekly-asia-tokyo-wednesday weekly -z Asia/Tokyo --start-of-week wednesday
# --since/--until with the session and blocks reports, across midnights of three zones.
run synthetic synthetic-session-asia-tokyo-0201-0201 session -z Asia/Tokyo --since 20260201 --until 20260201
run synthetic synthetic-session-america-new_york-0131-0201 session -z America/New_York --since 20260131 --until 20260201
run synthetic synthetic-blocks-asia-tokyo-0201-0201 blocks -z Asia/Tokyo --since 20260201 --until 20260201
run synthetic synthetic-blocks-america-new_york-0201-0201 blocks -z America/New_York --since 20260201 --until 20260201
run synthetic synthetic-blocks-utc-until-0201 blocks -z UTC --until 20260201
run synthetic synthetic-blocks-asia-kolkata-since-0301 blocks -z Asia/Kolkata --since 20260301
# Recorded costUSD (Claude Code 1.0.x lines) in each cost mode.
for mode in auto calculate display; do
  run recorded recorded-daily-$mode daily -z UTC --mode $mode
  run recorded recorded-session-$mode session -z UTC --mode $mode
  run recorded recorded-blocks-$mode blocks -z UTC --mode $mode
done
# Lines of one request with equal usage totals and different speeds (the tie rule of the session
# loader; ccusage's daily report breaks such ties by cost, which tune does not reproduce yet).
for report in weekly monthly session blocks; do
  run tie tie-$report $report -z UTC
done
# Model aliases (CCUSAGE_MODEL_ALIASES; the same string is in ccusage_test.go).
ALIASES='claude-mystery-9=claude-sonnet-4-5; claude-haiku-4-5=claude-opus-4-6,my-opus=claude-opus-4-6 , private-x-fast=claude-sonnet-4-6'
run alias alias-daily daily -z UTC
run alias alias-session session -z UTC
ALIASES=
run alias alias-daily-none daily -z UTC
"$CCU" --version > "$HERE/VERSION.txt"
