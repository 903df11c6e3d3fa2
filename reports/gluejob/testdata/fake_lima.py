#!/usr/bin/env python3
# The fake lima-tui of TestGlueDriverRuns: worker answers one manifest line
# per shard line, commit records what it got and writes a report; both
# log their calls to $WORK/calls.jsonl and exit $WORKER_RC / $COMMIT_RC.
import json, os, sys

args = sys.argv[1:]
ws = args[args.index("--dir") + 1]
plan = open(os.path.join(ws, "platform.yaml")).read()
log = open(os.path.join(os.environ["WORK"], "calls.jsonl"), "a")
if args[0] == "worker":
    for line in sys.stdin:
        s = json.loads(line)
        log.write(json.dumps({"verb": "worker", "shard": s, "plan": plan}) + "\n")
        print(json.dumps({"version": 1, "load_id": s["load_id"], "shard": s["shard"], "attempt": s["attempt"], "ok": True}))
    sys.exit(int(os.environ.get("WORKER_RC", "0")))
if args[0] == "commit":
    expect = open(args[args.index("--expect") + 1]).read()
    log.write(json.dumps({"verb": "commit", "args": args, "manifests": sys.stdin.read(), "expect": expect, "plan": plan}) + "\n")
    os.makedirs(os.path.join(ws, "reports", "R1"))
    open(os.path.join(ws, "reports", "R1", "report.json"), "w").write('{"run_id": "R1"}')
    sys.exit(int(os.environ.get("COMMIT_RC", "0")))
sys.exit(2)
