#!/usr/bin/env python3
"""Memory of `colltune serve` over back-to-back 16-context bo campaigns (bench/memory.md).

    bench/daemon/memory-campaigns.py BINARY [--campaigns 3] [--budget 12] [--out DIR]
                                     [--wrap "heaptrack -o FILE"]

Starts BINARY serve on 127.0.0.1 (free port) with the sim backend (profile hpc64x128) and a
fresh store, then runs the campaigns one after the other (bcast, allreduce, reduce, gather x
comm sizes 64, 128, 256, 512, sizes 4:1M, strategy bo). Samples /proc/PID/status (VmRSS,
VmHWM) every 0.25 s; after each campaign waits IDLE_S seconds and records the idle RSS.
Prints one JSON line per campaign and a summary line. Loopback only; the daemon is killed at
the end (by its pid).
"""
import argparse, json, os, signal, subprocess, sys, tempfile, threading, time, urllib.request

TOKEN = "mem-admin-token-0123456789abcdef"


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM", "Threads"):
                out[k] = int(v.split()[0])
    return out


def find_daemon(root, binary):
    """The process under `root` (a wrapper) whose executable is `binary`."""
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == binary:
                return pid
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    sys.exit(f"no {binary} under pid {root}")


def call(url, method="GET", body=None):
    req = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
    req.add_header("Authorization", "Bearer " + TOKEN)
    if body is not None:
        req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"null")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--campaigns", type=int, default=3)
    ap.add_argument("--budget", type=int, default=12)
    ap.add_argument("--idle", type=float, default=10.0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--wrap", default="", help="a launcher the daemon runs under (e.g. heaptrack)")
    a = ap.parse_args()
    work = a.out or tempfile.mkdtemp(prefix="colltune-mem-")
    os.makedirs(work, exist_ok=True)
    cfg = {"listen": "127.0.0.1:0", "database": os.path.join(work, "store.db"),
           "backends": {"sim": {"profile": "hpc64x128"}},
           "tokens": [{"token": TOKEN, "role": "admin", "name": "admin"}]}
    cfg_path = os.path.join(work, "config.json")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    log = open(os.path.join(work, "serve.log"), "w+")
    proc = subprocess.Popen(a.wrap.split() + [a.binary, "serve", "--config", cfg_path],
                            stdout=log, stderr=subprocess.STDOUT)
    daemon = proc.pid
    try:
        url = None
        for _ in range(600):
            log.seek(0)
            text = log.read()
            if "listening on " in text:
                url = text.split("listening on ", 1)[1].split()[0]
                if a.wrap:
                    daemon = find_daemon(proc.pid, os.path.realpath(a.binary))
                break
            if proc.poll() is not None:
                sys.exit("serve exited:\n" + text)
            time.sleep(0.05)
        peak = {"rss": 0}
        stop = threading.Event()

        def sampler():
            while not stop.is_set():
                try:
                    s = status(daemon)
                    peak["rss"] = max(peak["rss"], s["VmRSS"])
                    peak["threads"] = max(peak.get("threads", 0), s["Threads"])
                except OSError:
                    return
                time.sleep(0.25)

        threading.Thread(target=sampler, daemon=True).start()
        time.sleep(1)
        start_rss = status(daemon)["VmRSS"]
        contexts = [{"collective": c, "comm_size": p}
                    for c in ("bcast", "allreduce", "reduce", "gather") for p in (64, 128, 256, 512)]
        rows = []
        for i in range(a.campaigns):
            spec = {"name": f"mem {i}", "backend": "sim", "contexts": contexts, "sizes": "4:1M",
                    "strategy": "bo", "budget": a.budget, "seed": 7 + i, "batch_size": 4,
                    "final_repeats": 1, "verify": False}
            peak["rss"] = 0
            t0 = time.time()
            cid = call(url + "/api/v1/campaigns", "POST", spec)["id"]
            while True:
                c = call(url + f"/api/v1/campaigns/{cid}")
                if c["state"] not in ("queued", "running"):
                    break
                time.sleep(1)
            wall = time.time() - t0
            run_peak = peak["rss"]
            time.sleep(a.idle)
            s = status(daemon)
            row = {"campaign": i + 1, "state": c["state"], "wall_s": round(wall, 1),
                   "peak_rss_mib": round(run_peak / 1024), "hwm_mib": round(s["VmHWM"] / 1024),
                   "idle_rss_mib": round(s["VmRSS"] / 1024), "threads_peak": peak.get("threads")}
            rows.append(row)
            print(json.dumps(row), flush=True)
        print(json.dumps({"start_rss_mib": round(start_rss / 1024), "max_hwm_mib": rows[-1]["hwm_mib"],
                          "idle_after_last_mib": rows[-1]["idle_rss_mib"], "work": work}), flush=True)
    finally:
        stop.set() if "stop" in locals() else None
        os.kill(daemon, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
