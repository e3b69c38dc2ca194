#!/usr/bin/env bash
# What lmbench costs beside a bare Go client (scripts/bareclient)
# sending the same requests on the same schedules, in one sitting, against
# the built-in engine in its own process with every cost at zero (cache
# off), so what is measured is the clients' own work:
#
#   burst   200 prompts of 2,000 words at once (random-prefill)
#   seq     long-doc-qa, 1 in flight: 10 documents of 2,000 words, then
#           100 measured questions
#   rate1k  an open loop at 1,000 req/s, 2,000 tiny prompts (random-prefill)
#   n10k    the same open loop, 10,000 prompts: with rate1k it separates
#           the cost per request from the fixed cost
#   one     a 1-request run: the fixed cost (host, plugins, start-up)
#
# lmbench runs each case twice, with --tokenizer words and auto (the
# engine's /tokenize, counted). The three clients take turns in every
# repeat (REPEATS, at least 3), the order rotating, so a drift of the
# machine's speed falls on all of them. Per run: the client's CPU (user +
# sys of the process and every child it waited for, its plugins included,
# from wait4's rusage) per measured request, its peak RSS (the largest
# single process, from /usr/bin/time), TTFT p50/p99 (at zero engine cost: what the client
# adds), dispatch lag p99 (submit - due, open loops), the engine's CPU
# over the run (/proc/PID/stat of the engine process). The table gives
# each client's min/median/max and lmbench's median ratio to the bare
# client's, pair by pair within a repeat.
#
# Then the highest open-loop rate each client sustains (achieved >= 99% of
# requested and dispatch lag p99 <= 2 ms): a ladder from 1,000 req/s,
# halving until a rate holds or doubling until one does not, then three
# bisections between the last rate that held and the first that did not
# (LADDER=0 skips it).
#
# On a shared machine figures move with the others' load: the load
# average is printed, read medians and ratios, not single runs.
set -euo pipefail
BIN=${BIN:-bin}
REPEATS=${REPEATS:-3}
LADDER=${LADDER:-1}
PORT=${PORT:-18377}
command -v python3 >/dev/null || { echo "needs python3"; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd scripts/bareclient && GOWORK=off go build -o "$out/bareclient" .)
python3 - "$BIN/lmbench" "$out/bareclient" "$PORT" "$out" "$REPEATS" "$LADDER" <<'PY'
import atexit, json, os, statistics as st, subprocess, sys, time, urllib.request

lmbench, bare, port, out, repeats, ladder = sys.argv[1:7]
repeats, ladder = max(int(repeats), 3), ladder != "0"
url = f"http://127.0.0.1:{port}"
tick = os.sysconf("SC_CLK_TCK")

# The engine in a process of its own, so its CPU is its own.
engine = subprocess.Popen([lmbench, "sim", "--port", port, "--time-scale", "0", "--gpu-gb", "0", "--cpu-gb", "0",
                           "--log-level", "warn"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
atexit.register(engine.kill)
sim = engine.pid
for _ in range(100):
    try:
        urllib.request.urlopen(f"{url}/health", timeout=1)
        break
    except OSError:
        time.sleep(0.1)
else:
    raise SystemExit(f"the built-in engine did not answer on {url}/health")

def engine_cpu():
    f = open(f"/proc/{sim}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tick  # utime, stime

def q(v, p):  # nearest rank, as the bare client computes its own
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else None

def lm_args(case, tok):
    common = ["run", "--engine-url", url, "--no-interactive", "-q", "--json", "--tokenizer", tok, "--output-dir", f"{out}/run"]
    rp = ["--workload", "random-prefill", "--tokens-per-gb-kvcache", "1000", "--kv-cache-volume", "1"]
    return common + {
        "burst": ["--workload", "random-prefill", "--rp-num-requests", "200", "--rp-request-length", "2000",
                  "--tokens-per-gb-kvcache", "8192"],
        "seq": ["--workload", "long-doc-qa", "--ldqa-num-inflight-requests", "1", "--ldqa-document-length", "2000",
                "--ldqa-query-per-document", "10", "--tokens-per-gb-kvcache", "20000", "--kv-cache-volume", "1"],
        "rate1k": rp + ["--rp-rate", "1000", "--rp-num-requests", "2000", "--rp-request-length", "16"],
        "n10k": rp + ["--rp-rate", "1000", "--rp-num-requests", "10000", "--rp-request-length", "16"],
        "one": rp + ["--rp-num-requests", "1", "--rp-request-length", "16"],
    }[case]

def bare_args(case, rate=None):
    u = ["-url", f"{url}/v1/chat/completions"]
    return u + {
        "burst": ["-mode", "burst", "-n", "200", "-length", "2000"],
        "seq": ["-docs", "10", "-queries", "10", "-length", "2000", "-max-tokens", "128"],
        "rate1k": ["-mode", "rate", "-rate", "1000", "-n", "2000", "-length", "16"],
        "n10k": ["-mode", "rate", "-rate", "1000", "-n", "10000", "-length", "16"],
        "one": ["-mode", "burst", "-n", "1", "-length", "16"],
    }[case] if rate is None else u + ["-mode", "rate", "-rate", str(rate), "-n", str(int(rate * 2)), "-length", "16"]

# CPU from wait4's rusage (the client and every child it waited for, at
# microsecond resolution); peak RSS from /usr/bin/time's report: a child's
# maxrss starts at its parent's RSS at the fork, and this driver's is
# larger than a small client's, time's a few MiB.
def timed(argv):
    e0, t0 = engine_cpu(), time.monotonic()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", f"{out}/rss"] + argv,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    text = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit(f"{argv[0]} failed (status {status}): {' '.join(argv)}")
    rss = int(open(f"{out}/rss").read().split()[-1]) / 1024
    return text, {"cpu": ru.ru_utime + ru.ru_stime, "rss": rss, "engine": engine_cpu() - e0, "wall": time.monotonic() - t0}

def run_lm(case, tok):
    subprocess.run(["rm", "-rf", f"{out}/run"], check=True)
    _, m = timed([lmbench] + lm_args(case, tok))
    ttft, lag, submits = [], [], []
    for line in open(f"{out}/run/bench_journal.jsonl"):
        e = json.loads(line)
        r = e.get("record")
        if e.get("kind") != "request" or r["phase"] != "measure":
            continue
        ttft.append(r["ttft_s"] * 1e3)
        submits.append(r["submit_unix_ns"] / 1e9)
        if r.get("explicit_schedule"):
            lag.append((r["submit_unix_ns"] - r["scheduled_unix_ns"]) / 1e6)
    s = json.load(open(f"{out}/run/bench_summary.json"))
    m.update(n=len(ttft), ttft50=q(ttft, 50), ttft99=q(ttft, 99), lag99=q(lag, 99),
             achieved=(len(submits) - 1) / (max(submits) - min(submits)) if len(submits) > 1 and max(submits) > min(submits) else None,
             sizing=s.get("sizing"))
    return m

def run_bare(case, rate=None):
    text, m = timed([bare] + bare_args(case, rate))
    f = text.split()
    kv = dict(zip(f[0::2], f[1::2]))
    fl = lambda k: None if kv[k] == "n/a" else float(kv[k])
    m.update(n=int(kv["requests"]), ttft50=fl("ttft_p50_ms"), ttft99=fl("ttft_p99_ms"),
             lag99=fl("lag_p99_ms") if case in ("rate1k", "n10k", "ladder") else None, achieved=fl("achieved_per_s"))
    return m

clients = [("bare", lambda c: run_bare(c)), ("words", lambda c: run_lm(c, "words")), ("auto", lambda c: run_lm(c, "auto"))]
cases = ["one", "burst", "seq", "rate1k", "n10k"]
res = {(c, k): [] for c in cases for k, _ in clients}
print(f"load average at the start: {open('/proc/loadavg').read().split()[0]}; {repeats} repeats", flush=True)
for i in range(repeats):
    for case in cases:
        order = clients[i % 3:] + clients[:i % 3]
        for name, fn in order:
            res[(case, name)].append(fn(case))
    print(f"repeat {i + 1} done (load average {open('/proc/loadavg').read().split()[0]})", flush=True)

def fmt(v, unit):
    if v is None:
        return "n/a"
    return f"{v * 1e3:.3f}" if unit == "ms/req" else f"{v:.1f}" if unit == "MiB" else f"{v:.3f}" if unit == "ms" else f"{v:.3f}"

rows = [("client CPU per request", "ms/req", lambda m: m["cpu"] / m["n"]),
        ("client CPU per run", "s", lambda m: m["cpu"]),
        ("peak RSS", "MiB", lambda m: m["rss"]),
        ("TTFT p50 (client-added)", "ms", lambda m: m["ttft50"]),
        ("TTFT p99 (client-added)", "ms", lambda m: m["ttft99"]),
        ("dispatch lag p99", "ms", lambda m: m["lag99"]),
        ("engine CPU for the run", "s", lambda m: m["engine"])]

def spread(vals, unit):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "n/a"
    return f"{fmt(min(vals), unit)} / {fmt(st.median(vals), unit)} / {fmt(max(vals), unit)}"

def ratio(a, b):
    r = [x / y for x, y in zip(a, b) if x is not None and y]
    return f"{st.median(r):.2f}x" if r else "n/a"

print()
print("| case | figure (unit) | bare min/med/max | lmbench words min/med/max | ratio | lmbench auto min/med/max | ratio |")
print("|---|---|---|---|---|---|---|")
for case in cases:
    for label, unit, get in rows:
        b = [get(m) for m in res[(case, "bare")]]
        w = [get(m) for m in res[(case, "words")]]
        a = [get(m) for m in res[(case, "auto")]]
        print(f"| {case} | {label} ({unit}) | {spread(b, unit)} | {spread(w, unit)} | {ratio(w, b)} | {spread(a, unit)} | {ratio(a, b)} |")

# Per request and fixed cost from the two open loops (same rate, 2,000 and 10,000 prompts).
print()
for name, _ in clients:
    small = st.median(m["cpu"] for m in res[("rate1k", name)])
    big = st.median(m["cpu"] for m in res[("n10k", name)])
    per = (big - small) / 8000
    print(f"{name}: CPU per request from the open loops {per * 1e6:.1f} us, fixed {small - 2000 * per:.3f} s (1-request run: "
          f"{st.median(m['cpu'] for m in res[('one', name)]):.3f} s, {st.median(m['rss'] for m in res[('one', name)]):.1f} MiB)")
for case in cases:
    s = [m.get("sizing") for m in res[(case, "auto")] if m.get("sizing")]
    if s:
        print(f"{case} auto: prompts sized in {st.median(x['seconds'] for x in s):.3f} s, "
              f"{st.median(x['engine_calls'] for x in s):.0f} engine calls (median)")

if not ladder:
    sys.exit(0)

def holds(fn, rate):
    m = fn(rate)
    ok = m["achieved"] is not None and m["achieved"] >= 0.99 * rate and m["lag99"] is not None and m["lag99"] <= 2
    print(f"  {rate:8.0f} req/s: achieved {fmt(m['achieved'], 'x')} lag p99 {fmt(m['lag99'], 'ms')} ms -> {'holds' if ok else 'does not hold'}", flush=True)
    return ok

def lm_rate(rate):
    subprocess.run(["rm", "-rf", f"{out}/run"], check=True)
    args = lm_args("rate1k", "words")
    i = args.index("--rp-rate")
    args[i + 1], args[i + 3] = str(rate), str(int(rate * 2))
    return run_lm_args(args)

def run_lm_args(args):
    _, m = timed([lmbench] + args)
    lag, submits = [], []
    for line in open(f"{out}/run/bench_journal.jsonl"):
        e = json.loads(line)
        r = e.get("record")
        if e.get("kind") == "request" and r["phase"] == "measure" and r.get("explicit_schedule"):
            lag.append((r["submit_unix_ns"] - r["scheduled_unix_ns"]) / 1e6)
            submits.append(r["submit_unix_ns"] / 1e9)
    m.update(lag99=q(lag, 99), achieved=(len(submits) - 1) / (max(submits) - min(submits)) if len(submits) > 1 else None)
    return m

print()
print("highest sustained open-loop rate (achieved >= 99% of requested, dispatch lag p99 <= 2 ms), 2 s a rung:")
for name, fn in (("bare", lambda r: run_bare("ladder", r)), ("lmbench", lm_rate)):
    print(f"{name}:", flush=True)
    good, bad, rate = None, None, 1000
    while good is None and rate >= 125:  # down by halves until a rate holds
        if holds(fn, rate):
            good = rate
        else:
            bad, rate = rate, rate / 2
    while bad is None and good is not None and rate <= 64000:  # then up by doubling until one does not
        rate *= 2
        if holds(fn, rate):
            good = rate
        else:
            bad = rate
    for _ in range(3):
        if good is None or bad is None:
            break
        mid = (good + bad) / 2
        if holds(fn, mid):
            good = mid
        else:
            bad = mid
    print(f"{name}: sustains {f'{good:.0f}' if good else 'less than 125'} req/s")
PY
