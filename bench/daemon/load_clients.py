#!/usr/bin/env python3
"""Clients of the load suite (bench/daemon/load-suite.sh); standard library only.

  sse     N concurrent /api/v1/events streams for a duration: each counts its events; at the
          end every stream must still be connected and have received the same durable events
          (ids), checked against a reference stream replayed from the store.
  feed    keeps N campaigns running (creates a new one when one finishes) for a duration.
  soak    runs COUNT campaigns back to back (LANES at a time), each created, then waited for.
  summary first/last/min/max and trend of a sampler file (RSS, open fds, threads).

Every loop is bounded in count and time; traffic goes to the daemon's loopback address only.
"""
import argparse
import asyncio
import http.client
import json
import sys
import time
import urllib.parse


def split_url(url):
    u = urllib.parse.urlparse(url)
    if u.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit(f"refusing non-loopback daemon address {url}")
    return u.hostname, u.port


class Api:
    """One keep-alive connection to the daemon."""

    def __init__(self, url, token):
        self.host, self.port = split_url(url)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        self.conn = None

    def call(self, method, path, body=None):
        for attempt in range(3):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
                self.conn.request(method, path, body=None if body is None else json.dumps(body),
                                  headers=self.headers)
                r = self.conn.getresponse()
                data = r.read()
                return r.status, json.loads(data) if data else None
            except (ConnectionError, http.client.HTTPException, OSError):
                self.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.2)


# ---- SSE ----------------------------------------------------------------------------------

async def sse_stream(host, port, token, path, deadline, stats, stop_when_idle=None):
    """Reads one event stream until `deadline`; fills `stats`."""
    stats.update(connected=False, status=None, events=0, transient=0, ids=[], ended_early=False,
                 error=None)
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write((f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
                      "Accept: text/event-stream\r\n\r\n").encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        stats["status"] = int(head.split(b" ", 2)[1])
        if stats["status"] != 200:
            stats["error"] = head.decode(errors="replace").splitlines()[0]
            writer.close()
            return
        stats["connected"] = True
        buffer = b""
        last_data = time.monotonic()
        # Chunked transfer: the chunk framing lines are dropped, SSE blocks split on blank lines.
        while True:
            now = time.monotonic()
            if now >= deadline:
                break
            if stop_when_idle and now - last_data > stop_when_idle:
                break
            try:
                data = await asyncio.wait_for(reader.read(65536), min(1.0, deadline - now))
            except asyncio.TimeoutError:
                continue
            if not data:
                stats["ended_early"] = True
                break
            buffer += data
            while True:
                # A chunk: "<hex>\r\n<payload>\r\n".
                line_end = buffer.find(b"\r\n")
                if line_end < 0:
                    break
                size = int(buffer[:line_end].split(b";")[0] or b"0", 16)
                if len(buffer) < line_end + 2 + size + 2:
                    break
                payload = buffer[line_end + 2:line_end + 2 + size]
                buffer = buffer[line_end + 2 + size + 2:]
                if size == 0:
                    stats["ended_early"] = True
                    break
                stats.setdefault("text", b"")
                stats["text"] += payload
                while b"\n\n" in stats["text"]:
                    block, stats["text"] = stats["text"].split(b"\n\n", 1)
                    event_id, event_type = None, None
                    for line in block.decode(errors="replace").split("\n"):
                        if line.startswith("id: "):
                            event_id = int(line[4:])
                        elif line.startswith("event: "):
                            event_type = line[7:]
                    if event_type is None:
                        continue  # comment / keepalive
                    last_data = time.monotonic()
                    stats["events"] += 1
                    if event_id is None:
                        stats["transient"] += 1
                    else:
                        stats["ids"].append(event_id)
            if stats["ended_early"]:
                break
        writer.close()
    except Exception as e:  # noqa: BLE001 - reported, counted as a failed stream
        stats["error"] = repr(e)
    stats.pop("text", None)


async def sse_main(args):
    host, port = split_url(args.url)
    path = "/api/v1/events"
    if args.from_id is not None:
        path += f"?last_event_id={args.from_id}"
    deadline = time.monotonic() + args.duration
    stats = [dict() for _ in range(args.clients)]
    await asyncio.gather(*(sse_stream(host, port, args.token, path, deadline, s) for s in stats))
    # Reference: every durable event after from_id, replayed from the store.
    reference = {}
    await sse_stream(host, port, args.token, path, time.monotonic() + 60, reference,
                     stop_when_idle=3)
    ref_ids = reference["ids"]
    complete = 0
    as_set = 0
    for s in stats:
        ids = s["ids"]
        # Same events regardless of order (tells a lost event from a reordered one).
        s["complete_set"] = bool(ids) and set(ids) == set(i for i in ref_ids if i <= max(ids))
        as_set += s["complete_set"]
    for s in stats:
        ids = s["ids"]
        # A stream has every durable event up to its last one, in order, each once.
        s["complete"] = bool(s["connected"]) and ids == ref_ids[:len(ids)] and len(ids) > 0
        complete += s["complete"]
    counts = [s["events"] for s in stats]
    durable = [len(s["ids"]) for s in stats]
    summary = {
        "clients": args.clients,
        "duration_s": args.duration,
        "connected": sum(1 for s in stats if s["connected"]),
        "ended_early": sum(1 for s in stats if s["ended_early"]),
        "errors": [s["error"] for s in stats if s["error"]][:5],
        "error_count": sum(1 for s in stats if s["error"]),
        "events_per_client_min": min(counts),
        "events_per_client_max": max(counts),
        "events_total": sum(counts),
        "durable_per_client_min": min(durable),
        "durable_per_client_max": max(durable),
        "reference_durable_events": len(ref_ids),
        "clients_with_every_durable_event_in_order": complete,
        "clients_with_every_durable_event_any_order": as_set,
    }
    print(json.dumps(summary, indent=1))
    ok = (summary["connected"] == args.clients and summary["ended_early"] == 0 and
          summary["error_count"] == 0 and complete == args.clients)
    return 0 if ok else 1


# ---- campaigns ----------------------------------------------------------------------------

def create(api, spec):
    status, body = api.call("POST", "/api/v1/campaigns", spec)
    if status != 201:
        raise RuntimeError(f"create answered {status}: {body}")
    return body["id"]


def feed_main(args):
    api = Api(args.url, args.token)
    spec = json.load(open(args.spec))
    deadline = time.monotonic() + args.duration
    created = 0
    while time.monotonic() < deadline and created < 10000:
        status, body = api.call("GET", "/api/v1/campaigns?state=running&limit=1")
        running = body["total"] if status == 200 else args.running
        status, body = api.call("GET", "/api/v1/campaigns?state=queued&limit=1")
        queued = body["total"] if status == 200 else 0
        for _ in range(max(0, args.running - running - queued)):
            spec["seed"] = created + 1
            create(api, spec)
            created += 1
        time.sleep(2)
    print(json.dumps({"created": created}))
    return 0


def soak_main(args):
    spec = json.load(open(args.spec))
    apis = [Api(args.url, args.token) for _ in range(args.lanes)]
    out = open(args.out, "w")
    out.write("n\tid\tstate\tseconds\n")
    lanes = [None] * args.lanes  # (n, id, start)
    started = done = failed = 0
    t0 = time.monotonic()
    deadline = t0 + args.max_seconds
    while done < args.count and time.monotonic() < deadline:
        for i, api in enumerate(apis):
            if lanes[i] is None and started < args.count:
                spec["seed"] = started + 1
                lanes[i] = (started + 1, create(api, spec), time.monotonic())
                started += 1
            if lanes[i] is None:
                continue
            n, cid, start = lanes[i]
            status, body = api.call("GET", f"/api/v1/campaigns/{cid}")
            if status == 200 and body["state"] in ("done", "failed", "cancelled") and not body["active"]:
                out.write(f"{n}\t{cid}\t{body['state']}\t{time.monotonic() - start:.3f}\n")
                out.flush()
                done += 1
                failed += body["state"] != "done"
                lanes[i] = None
        time.sleep(0.02)
    summary = {"campaigns": done, "not_done": failed, "seconds": round(time.monotonic() - t0, 1)}
    print(json.dumps(summary))
    return 0 if done == args.count and failed == 0 else 1


def summary_main(args):
    """Summary of a sampler file: elapsed, rss_kb, hwm_kb, fds, threads per line."""
    rows = []
    for line in open(args.samples):
        if line.startswith("#") or not line.strip():
            continue
        t, rss, hwm, fds, threads = (float(x) for x in line.split()[:5])
        rows.append((t, rss, hwm, fds, threads))
    if not rows:
        print(json.dumps({"samples": 0}))
        return 1

    def stats(col, scale=1.0):
        v = [r[col] / scale for r in rows]
        half = v[len(v) // 2:]
        ts = [r[0] for r in rows[len(rows) // 2:]]
        # Least-squares slope over the second half, per 10 minutes.
        n = len(half)
        slope = 0.0
        if n > 2:
            mt, mv = sum(ts) / n, sum(half) / n
            den = sum((t - mt) ** 2 for t in ts)
            slope = sum((t - mt) * (x - mv) for t, x in zip(ts, half)) / den * 600 if den else 0.0
        return {"first": round(v[0], 1), "last": round(v[-1], 1), "min": round(min(v), 1),
                "max": round(max(v), 1), "second_half_slope_per_10min": round(slope, 2)}

    print(json.dumps({"samples": len(rows), "seconds": round(rows[-1][0] - rows[0][0]),
                      "rss_mb": stats(1, 1024), "fds": stats(3), "threads": stats(4)}, indent=1))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("sse", "feed", "soak"):
        s = sub.add_parser(name)
        s.add_argument("--url", required=True)
        s.add_argument("--token", required=True)
    sub.add_parser("summary").add_argument("samples")
    s = sub.choices["sse"]
    s.add_argument("--clients", type=int, default=100)
    s.add_argument("--duration", type=float, default=60)
    s.add_argument("--from-id", type=int)
    s = sub.choices["feed"]
    s.add_argument("--spec", required=True)
    s.add_argument("--running", type=int, default=6)
    s.add_argument("--duration", type=float, default=600)
    s = sub.choices["soak"]
    s.add_argument("--spec", required=True)
    s.add_argument("--count", type=int, default=1000)
    s.add_argument("--lanes", type=int, default=1)
    s.add_argument("--out", required=True)
    s.add_argument("--max-seconds", type=float, default=3600)
    args = p.parse_args()
    if args.command == "sse":
        return asyncio.run(sse_main(args))
    if args.command == "summary":
        return summary_main(args)
    if args.command == "feed":
        return feed_main(args)
    return soak_main(args)


if __name__ == "__main__":
    sys.exit(main())
