#!/usr/bin/env python3
"""chrome_trace_check.py TRACE: checks a Chrome Trace Event file as the
trace viewers need it: a JSON object with traceEvents; per thread, B/E
slices properly nested (every E closes the innermost open B) with times
that never go back, nothing left open, and a thread_name for each thread
with slices. Prints "THREAD_COUNT SLICES INSTANTS" plus one "instant NAME"
line per instant event name with its count; exits 1 on the first fault."""
import collections
import json
import sys

trace = json.load(open(sys.argv[1], encoding="utf-8"))
events = trace["traceEvents"]
names = {}
open_slices = collections.defaultdict(list)
last_ts = {}
slices = 0
instants = collections.Counter()
for i, e in enumerate(events):
    key = (e["pid"], e["tid"])
    ph = e["ph"]
    if ph == "M":
        if e["name"] == "thread_name":
            names[key] = e["args"]["name"]
        continue
    if ph == "i":
        instants[e["name"]] += 1
        continue
    ts = float(e["ts"])
    if ts < last_ts.get(key, 0.0):
        sys.exit(f"event {i}: time {ts} before {last_ts[key]} on thread {key}")
    last_ts[key] = ts
    if ph == "B":
        open_slices[key].append(e["name"])
        slices += 1
    elif ph == "E":
        if not open_slices[key]:
            sys.exit(f"event {i}: E with no open slice on thread {key}")
        open_slices[key].pop()
    else:
        sys.exit(f"event {i}: unexpected phase {ph}")
for key, stack in open_slices.items():
    if stack:
        sys.exit(f"thread {key}: {len(stack)} slices left open")
    if key not in names:
        sys.exit(f"thread {key}: no thread_name")
print(len(open_slices), slices, sum(instants.values()))
for name, n in sorted(instants.items()):
    print("instant", name, n)
