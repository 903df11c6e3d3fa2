#!/usr/bin/env bash
# The scripted walk through the wizard (`make tui-test`, called by
# `make test`): builds lima-tui, runs `lima-tui demo` in a detached tmux of
# 100×30 in a temporary folder, walks every gate on the defaults with
# send-keys and asserts on the text of each screen (capture-pane -p):
# the approver's name → gate 1 → 2 → 3 (an edit, its diff, undo, approve) → the run → gate 4's
# reconciliation (the numbers of every table against report.json, and
# read = loaded + held + skipped from the screen itself) → a table's
# detail → the exception browser (an owner filter with a space) → a new
# start opening the last run's gate 4 → gate 5's teardown with the typed
# prefix. Mid-run the window shrinks to 50×14: q must ask first. Then, on
# a new folder of eight orders, a date-format edit in gate 3 that changes
# the rows held back, and the run.
#
# Skips loudly (exit 0) when tmux is missing and cannot be installed
# (apt-get, as root). TUI_TEST_PANES=DIR keeps every captured pane there.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

if ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "tui-test: installing tmux"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux) >/dev/null 2>&1 || true
  fi
fi
if ! command -v tmux >/dev/null 2>&1; then
  echo "!!! tui-test SKIPPED: tmux is not installed and could not be installed (not root, or no apt-get)"
  exit 0
fi

# TUI_SIZE=COLSxROWS: the window's size (default 100x30, the projector's;
# make test walks 100x30 and 80x24).
size="${TUI_SIZE:-100x30}"
cols="${size%x*}" rows_="${size#*x}"
case "$cols$rows_" in *[!0-9]*|"") echo "tui-test: TUI_SIZE=$size: want COLSxROWS" >&2; exit 2 ;; esac
echo "== tui-test at ${cols}x${rows_}"

tmp="$(mktemp -d)"
sock="lima-tui-test-$$"
panes="${TUI_TEST_PANES:-$tmp/panes}"
mkdir -p "$panes"
sockpath=""
cleanup() {
  tmux -L "$sock" kill-server >/dev/null 2>&1 || true
  if [ -n "$sockpath" ]; then rm -f "$sockpath"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== tui-test: build"
go build -o "$tmp/lima-tui" ./cmd/lima-tui
start=$(date +%s)

mkdir -p "$tmp/ws"
# -f /dev/null: no user tmux.conf changes the window.
tmux -L "$sock" -f /dev/null new-session -d -s walk -x "$cols" -y "$rows_" \
  "cd '$tmp/ws' && NO_COLOR=1 TERM=xterm-256color '$tmp/lima-tui' demo --dir demo --theme mono --rows 2000000; echo \"WIZARD EXITED \$?\"; sleep 60"
sockpath="$(tmux -L "$sock" display-message -p '#{socket_path}' 2>/dev/null || true)"

n=0
pane() { tmux -L "$sock" capture-pane -p -t walk; }
fail() {
  echo "tui-test: FAIL: $*" >&2
  echo "---- the screen:" >&2
  pane >&2
  exit 1
}
# wait_for TEXT [SECONDS]: until the screen shows TEXT.
wait_for() {
  local want="$1" limit="${2:-15}" i=0
  while [ "$i" -lt $((limit * 10)) ]; do
    if pane | grep -qF -- "$want"; then return 0; fi
    sleep 0.1
    i=$((i + 1))
  done
  fail "waited ${limit}s for \"$want\""
}
# wait_re REGEX [SECONDS]
wait_re() {
  local want="$1" limit="${2:-15}" i=0
  while [ "$i" -lt $((limit * 10)) ]; do
    if pane | grep -qE -- "$want"; then return 0; fi
    sleep 0.1
    i=$((i + 1))
  done
  fail "waited ${limit}s for /$want/"
}
has() { pane | grep -qF -- "$1" || fail "the screen lacks \"$1\""; }
lacks() { ! pane | grep -qF -- "$1" || fail "the screen shows \"$1\""; }
# snap NAME: keep the pane (for the walk-through in docs/walkthrough.md).
snap() {
  n=$((n + 1))
  pane >"$panes/$(printf %02d "$n")-$1.txt"
}
keys() {
  tmux -L "$sock" send-keys -t walk "$@"
  sleep 0.15
}

echo "== tui-test: who approves"
wait_for "Who is approving?"
has "recommended: "
snap who
keys C-u
keys -l "Workshop Tester"
wait_for "> Workshop Tester"
keys Enter

echo "== tui-test: gate 1"
wait_for "Gate 1 · scope & residency"
has "all questions answered"
has "✓ gate 1 passes"
has "[1 scope]"
snap gate1

echo "== tui-test: gate 2"
keys Enter
wait_for "every check passes" 30
has "Gate 2 · preconditions"
has "0 failed"
has "✓ source erp"
snap gate2

echo "== tui-test: gate 3"
keys Enter
wait_for "Base tables (" 30
has "Gate 3 · data model"
has "[3 model]"
has "key (gauge_id)"
snap gate3
# An edit shows its diff; undo takes it back.
keys Down
keys p
wait_for "Diff against platform.yaml:"
has "~ gauge_calibrations partition: none → month(calibrated_on)"
has "change(s), not approved"
snap gate3-diff
keys u
wait_for "edits undone"
lacks "Diff against platform.yaml:"
# The marts with their grain and SUM-safe measures are further down.
for _ in 1 2 3 4 5 6 7 8 9 10; do
  pane | grep -qF "SUM-safe" && break
  keys PageDown
done
wait_for "SUM-safe"
has "grain ("
has "enter continue · "
keys Enter
wait_for "Gate 3 approved. Enter loads" 15
grep -q "approved_by:" "$tmp/ws/demo/platform.yaml" || fail "no approval recorded in platform.yaml"
# Walking past the demo's approved gates (the edit undone) keeps their approvals.
if grep -q "Workshop Tester" "$tmp/ws/demo/platform.yaml"; then fail "walking past an approved gate rewrote its approval"; fi

echo "== tui-test: the run"
keys Enter
# The first live frame: every table of the run is on the board from the
# start (queued until it starts). The demo's run is short; if it ended
# before a capture, that is said, not faked.
# With --rows 2000000 the run lasts long enough to see it move: two frames
# a second apart must show the inspections bar and its time left, and
# more rows read in the second.
live=""
for _ in $(seq 1 100); do
  cur="$(pane)"
  if printf '%s\n' "$cur" | grep -qE "^ [^ ]+ inspections +reading .*\] +[0-9]+% ~[0-9]+[sm]"; then live="$cur"; break; fi
  if printf '%s\n' "$cur" | grep -qF "balance per table"; then break; fi
  sleep 0.1
done
[ -n "$live" ] || fail "no live frame with the inspections bar and its time left"
sleep 1
live2="$(pane)"
insp_rows() { printf '%s\n' "$1" | awk '$2 == "inspections" { gsub(",", "", $4); print $4; exit }'; }
r1="$(insp_rows "$live")"; r2="$(insp_rows "$live2")"
printf '%s\n' "$live2" | grep -qE "^ [^ ]+ inspections +(reading|writing|committing|reconciling|loaded)" || fail "the second frame lost the inspections row"
[ -n "$r1" ] && [ -n "$r2" ] && [ "$r2" -gt "$r1" ] || fail "the board did not move in a second: inspections rows $r1 then $r2"
echo "   the live board moved: inspections $r1 → $r2 rows read in a second, with a bar and the time left"
# Too small mid-run: the run goes on, and q asks before it cancels
# anything; n keeps it running.
if ! pane | grep -qF "balance per table"; then
  tmux -L "$sock" resize-window -t walk -x 50 -y 14
  wait_for "terminal too small"
  if pane | grep -qF "the run goes on"; then
    snap run-too-small
    keys q
    wait_re "Cancel the run\? y cancels it, n keeps it running|q or ctrl\+c quits"
    if pane | grep -qF "Cancel the run?"; then
      keys n
      wait_re "the run goes on|q or ctrl\+c quits"
      echo "   50×14 mid-run: q asked before cancelling, n kept the run going"
    else
      echo "!!! tui-test: the run ended while q was on its way: q-asks-first is SKIPPED (the wizard did not quit)"
    fi
  else
    echo "!!! tui-test: the run ended before the too-small check: q-asks-first is SKIPPED"
  fi
  tmux -L "$sock" resize-window -t walk -x "$cols" -y "$rows_"
fi
wait_for "balance per table" 120
has "✓ run "
snap run
report_run="$(ls "$tmp"/ws/demo/reports/*/report.json | head -1)"
board_has() { # board_has SCREEN WHEN: every table of report.json on the board
  local name
  for name in $(python3 -c 'import json,sys; print("\n".join(t["name"] for t in json.load(open(sys.argv[1]))["tables"]))' "$report_run"); do
    printf '%s\n' "$1" | grep -qE "^ [^ ]+ ${name:0:15}" || fail "$2: table $name is not on the progress board"
  done
}
if command -v python3 >/dev/null 2>&1; then
  if [ -n "$live" ]; then
    board_has "$live" "the live run frame"
    printf '%s\n' "$live" >"$panes/run-live.txt"
    echo "   the live run frame shows every table"
  else
    echo "!!! tui-test: the demo run ended before a live frame was captured: the live board check is SKIPPED"
  fi
  board_has "$(pane)" "the finished run"
  has "100%"
fi

echo "== tui-test: gate 4"
keys Enter
wait_for "Gate 4 · reconciliation"
has "rows loaded (=) and held back (!) per table"
snap reconcile
report="$(ls "$tmp"/ws/demo/reports/*/report.json | head -1)"
[ -f "$report" ] || fail "no report.json"
screen="$(pane)"
# A small window scrolls the table list: move down until the last table is
# on screen, keeping every frame, then back to the first table.
moved=0
while pane | grep -qF "table(s) below" && [ "$moved" -lt 20 ]; do
  keys Down
  moved=$((moved + 1))
  screen="$screen
$(pane)"
done
for _ in $(seq 1 "$moved"); do keys Up; done
# On screen, every table's row balances: read = loaded + held + skipped.
rows=$(printf '%s\n' "$screen" | awk '
  / ✓ yes / && $0 !~ /table/ {
    i = ($1 == ">") ? 2 : 1
    r = $(i+1); l = $(i+2); q = $(i+3); k = $(i+4)
    gsub(",", "", r); gsub(",", "", l); gsub(",", "", q); gsub(",", "", k)
    if (r + 0 != l + q + k) { print "unbalanced: " $0; bad = 1 }
    if (!seen[$i]++) n++
  }
  END { if (bad) exit 1; print n }') || fail "a table does not balance on screen: $rows"
[ "$rows" -ge 6 ] || fail "the reconciliation shows $rows balanced table rows, want the demo's 6"
if ! command -v python3 >/dev/null 2>&1; then
  echo "!!! tui-test: python3 is missing: the check of the screen's numbers against report.json is SKIPPED"
else
# Every table's row shows the report's numbers.
python3 - "$report" "$screen" <<'PY' || fail "the reconciliation table does not show report.json's numbers"
import json, re, sys
rep = json.load(open(sys.argv[1]))
screen = sys.argv[2]
def n(s): return int(s.replace(",", ""))
bad = 0
for t in rep["tables"]:
    # A narrow window cuts long names with "…": the row is the one whose
    # name, as shown, is the table's or a cut of it.
    m = None
    for c in re.finditer(r"\s(\S+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+✓ yes", screen):
        shown = c.group(1)
        if shown == t["name"] or (shown.endswith("…") and len(shown) > 3 and t["name"].startswith(shown[:-1])):
            m = c
            break
    if not m:
        print("no row for", t["name"]); bad += 1; continue
    read, loaded, held, skip = map(n, m.groups()[1:])
    want = (t["rows_read"], t["rows_loaded"], t["rows_quarantined"], t["rows_skipped"])
    if (read, loaded, held, skip) != want:
        print(t["name"], "screen", (read, loaded, held, skip), "report", want); bad += 1
    if read != loaded + held + skip:
        print(t["name"], "does not balance on screen"); bad += 1
sys.exit(1 if bad else 0)
PY
fi
keys Enter
wait_for "Control totals"
has "Failed checks ("
has "Sample rows, source | lake"
snap reconcile-table

echo "== tui-test: the exception browser"
keys Enter
wait_for "Lima exceptions"
wait_re "exceptions matching table=[a-z_]+: [0-9]+"
wait_re "^ +> +[0-9]+ "
snap exceptions
keys Escape
wait_re "^ exceptions: [0-9]+"
has "esc back to gate 4"
snap exceptions-all
# An owner with spaces and parentheses, typed whole and as part of it:
# both find the report's count for that owner.
if command -v python3 >/dev/null 2>&1; then
  want_owner=$(python3 -c 'import json,sys; print(format(json.load(open(sys.argv[1]))["exceptions"]["by_owner"].get("Ji-woo Park (quality)", 0), ","))' "$report")
  for f in 'owner=Ji-woo Park (quality)' 'owner=park'; do
    keys /
    keys C-u
    keys -l "$f"
    keys Enter
    wait_for "exceptions matching owner=Ji-woo Park (quality): $want_owner"
    keys Escape
    wait_re "^ exceptions: [0-9]+"
  done
  echo "   owner filters with a space and by part of the name: $want_owner exceptions, as report.json counts"
fi
keys Escape
wait_for "Gate 4 · "
keys Escape
wait_for "Gate 4 · reconciliation"

echo "== tui-test: the last run, from a new start"
# Quit, start the wizard again on the same plan: gate 1's g opens the
# last run's gate 4 without running.
keys q
wait_for "WIZARD EXITED 0"
tmux -L "$sock" respawn-pane -k -t walk \
  "cd '$tmp/ws' && NO_COLOR=1 TERM=xterm-256color '$tmp/lima-tui' wizard --plan demo/platform.yaml --theme mono; echo \"WIZARD EXITED \$?\"; sleep 60"
wait_for "Who is approving?"
keys C-u
keys -l "Workshop Tester"
keys Enter
wait_for "Gate 1 · scope & residency"
wait_for "g last run's gate 4"
keys g
wait_for "Gate 4 · reconciliation"
wait_for "as gate 4 checked it when the run ended"
snap last-run
echo "   a new start opens the last run's gate 4 with g"

echo "== tui-test: gate 5"
keys T
wait_for "Gate 5 · teardown"
wait_for "the blast radius"
has "Type the prefix erp_quality"
snap teardown
keys -l "erp_quality"
wait_for "✓ matches"
keys Enter
wait_for "removed" 30
wait_for "confirmed by Workshop Tester"
snap teardown-done
grep -A1 "teardown:" "$tmp/ws/demo/platform.yaml" | grep -q "approved_by: Workshop Tester" || fail "the teardown is not recorded as confirmed by Workshop Tester"
keys Escape
wait_for "Gate 4 · reconciliation"
keys q
wait_for "WIZARD EXITED 0"

echo "== tui-test: a date-format edit in gate 3, on a new folder"
# Eight orders, two dates ISO and six day-first: unpicking dd/MM/yyyy
# previews 6 of 8 rows held back, picking it again none; the run then
# loads all 8.
mkdir -p "$tmp/ws2/data"
printf 'order_id,customer,order_date,amount\n1,C1,2024-03-05,10.50\n2,C2,13/04/2024,11.50\n3,C1,21/05/2024,9.99\n4,C3,2024-06-01,1.00\n5,C2,21/07/2024,2.00\n6,C1,25/08/2024,3.10\n7,C3,14/09/2024,4.20\n8,C2,30/10/2024,5.30\n' >"$tmp/ws2/data/orders.csv"
tmux -L "$sock" respawn-pane -k -t walk \
  "cd '$tmp/ws2' && NO_COLOR=1 TERM=xterm-256color '$tmp/lima-tui' wizard --theme mono; echo \"WIZARD EXITED \$?\"; sleep 60"
wait_for "Who is approving?"
keys C-u
keys -l "Workshop Tester"
keys Enter
wait_for "Which folder, S3 prefix or database holds the data to land?"
keys C-d
wait_for "all questions answered"
keys Enter
wait_for "every check passes" 30
keys Enter
wait_for "Gate 3 · data model" 30
wait_for "orders ← data: orders.csv"
for _ in 1 2 3 4 5 6; do
  pane | grep -qE "^ > +order_date " && break
  keys Down
done
pane | grep -qE "^ > +order_date " || fail "order_date never got the focus in gate 3"
keys e
wait_for "Gate 3 · edit orders.order_date"
wait_for "orders: none of 8 sampled rows would be held back"
pane | grep -qE "^ > +\[1\] dd/MM/yyyy" || fail "the edit screen does not open on the picked format dd/MM/yyyy"
keys Space
wait_for "⚠ orders: 6 of 8 sampled rows would be held back"
has "2 of 8 sampled values parse as date (yyyy-MM-dd)"
snap gate3-edit-unpicked
keys Space
wait_for "orders: none of 8 sampled rows would be held back"
has "8 of 8 sampled values parse as date (yyyy-MM-dd | dd/MM/yyyy)"
snap gate3-edit
keys Enter
wait_for "Gate 3 · data model"
keys Enter
wait_for "Gate 3 approved. Enter loads" 15
keys Enter
wait_for "balance per table" 60
rep2="$(ls "$tmp"/ws2/reports/*/report.json | head -1)"
[ -f "$rep2" ] || fail "no report.json for the orders run"
if command -v python3 >/dev/null 2>&1; then
  python3 - "$rep2" <<'PY' || fail "the orders run did not load all 8 rows"
import json, sys
t = {x["name"]: x for x in json.load(open(sys.argv[1]))["tables"]}["orders"]
# The header line is read and skipped with its reason (header).
ok = (t["rows_loaded"], t["rows_quarantined"]) == (8, 0) and t["rows_read"] == t["rows_loaded"] + t["rows_quarantined"] + t["rows_skipped"]
ok = ok and t["rows_skipped"] == t.get("rows_skipped_by_reason", {}).get("header", 0)
sys.exit(0 if ok else 1)
PY
fi
echo "   the date-format edit previewed 6 of 8 held back, then none; the run loaded 8 of 8"
keys q
wait_for "WIZARD EXITED 0"

took=$(($(date +%s) - start))
echo "tui-test: ok — every gate walked on the defaults in ${took}s ($n screens checked)"
if [ -n "${TUI_TEST_PANES:-}" ]; then echo "tui-test: panes kept in $panes"; fi
