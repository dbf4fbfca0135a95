#!/usr/bin/env python3
"""Connection exhaustion against `colltune serve` (issue 20 item 1), loopback only.

Holds COUNT attacker connections for DURATION seconds and meanwhile probes GET /api/v1/health
(anonymous) and GET /api/v1/campaigns (viewer token) on fresh connections, one probe of each
every INTERVAL seconds; prints one JSON object: latency median, p99 and max per endpoint (a probe
that got no 200 within its 60 s timeout counts as failed, at 60 s), and what the attackers saw.

  exhaustion.py --url http://127.0.0.1:PORT --token T --mode slow|idle [--count 500]
                [--sources 10] [--every 4] [--duration 60] [--interval 0.5]

slow: each attacker sends "GET /api/v1/health HTTP/1.1" and then one header line every EVERY
      seconds, never the empty line that ends the head; when the daemon closes it, it connects
      again at once (an attacker keeps its connections up).
idle: each attacker connects and sends nothing; reconnects likewise.
Attackers use SOURCES loopback source addresses (127.0.0.2 ...), as that many clients would;
the probes come from 127.0.0.1.
"""
import argparse
import asyncio
import json
import statistics
import time
from urllib.parse import urlsplit


async def attacker(host, port, source, mode, every, deadline, stats):
    while time.monotonic() < deadline:
        try:
            reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
        except OSError:
            stats["connect_errors"] += 1
            await asyncio.sleep(0.5)
            continue
        stats["connections"] += 1
        stats["open"] += 1
        try:
            if mode == "slow":
                writer.write(b"GET /api/v1/health HTTP/1.1\r\n")
            line = 0
            while time.monotonic() < deadline:
                try:
                    data = await asyncio.wait_for(reader.read(4096),
                                                  timeout=every if mode == "slow" else 1.0)
                except asyncio.TimeoutError:
                    data = None
                if data == b"":
                    stats["closed_by_daemon"] += 1
                    break
                if data:
                    status = data[9:12].decode(errors="replace")
                    stats["answers"][status] = stats["answers"].get(status, 0) + 1
                if mode == "slow" and data is None:
                    writer.write(b"X-Slow-%d: 1\r\n" % line)
                    line += 1
                    await writer.drain()
        except (ConnectionError, OSError):
            stats["closed_by_daemon"] += 1
        finally:
            stats["open"] -= 1
            writer.close()
        await asyncio.sleep(0.05)


async def probe_once(host, port, path, token):
    start = time.monotonic()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 60)
        auth = b"Authorization: Bearer " + token.encode() + b"\r\n" if token else b""
        writer.write(b"GET " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + auth +
                     b"Connection: close\r\n\r\n")
        data = await asyncio.wait_for(reader.read(16), 60 - (time.monotonic() - start))
        writer.close()
        ok = data.startswith(b"HTTP/1.1 200")
    except (asyncio.TimeoutError, OSError):
        ok = False
    took = time.monotonic() - start
    return (took if ok else 60.0), ok


async def prober(host, port, path, token, interval, deadline, out):
    pending = []
    while time.monotonic() < deadline:
        pending.append(asyncio.ensure_future(probe_once(host, port, path, token)))
        await asyncio.sleep(interval)
    out.extend(await asyncio.gather(*pending))


def summary(results):
    times = sorted(t for t, _ in results)
    if not times:
        return {}
    p99 = times[min(len(times) - 1, int(round(0.99 * (len(times) - 1))))]
    return {"probes": len(times), "failed": sum(1 for _, ok in results if not ok),
            "median_ms": round(statistics.median(times) * 1000, 1),
            "p99_ms": round(p99 * 1000, 1), "max_ms": round(times[-1] * 1000, 1)}


async def main_async(a):
    u = urlsplit(a.url)
    host, port = u.hostname, u.port
    deadline = time.monotonic() + a.duration
    stats = {"connections": 0, "open": 0, "closed_by_daemon": 0, "connect_errors": 0,
             "answers": {}, "max_open": 0}
    tasks = [asyncio.ensure_future(attacker(host, port, "127.0.0.%d" % (2 + i % a.sources),
                                            a.mode, a.every, deadline, stats))
             for i in range(a.count)]

    async def watch():
        while time.monotonic() < deadline:
            stats["max_open"] = max(stats["max_open"], stats["open"])
            await asyncio.sleep(0.5)

    await asyncio.sleep(min(5.0, a.duration / 4))  # the attackers are in place first
    health, listing = [], []
    await asyncio.gather(watch(),
                         prober(host, port, "/api/v1/health", "", a.interval, deadline, health),
                         prober(host, port, "/api/v1/campaigns", a.token, a.interval, deadline,
                                listing), *tasks)
    return {"mode": a.mode, "count": a.count, "sources": a.sources, "every_s": a.every,
            "duration_s": a.duration, "health": summary(health),
            "campaign_list": summary(listing), "attackers": stats}


def summarize(path):
    """Prints the figures of a result file; exit status 1 when a probe went unanswered."""
    r = json.load(open(path))
    failed = 0
    for key in ("health", "campaign_list"):
        s = r[key]
        failed += s["failed"]
        print(f"exhaust {r['mode']} x{r['count']}: {key} median {s['median_ms']} ms, "
              f"p99 {s['p99_ms']} ms, max {s['max_ms']} ms, {s['failed']}/{s['probes']} failed")
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--summarize", metavar="RESULT.json", help="print a result file's figures")
    p.add_argument("--url")
    p.add_argument("--token")
    p.add_argument("--mode", choices=["slow", "idle"])
    p.add_argument("--count", type=int, default=500)
    p.add_argument("--sources", type=int, default=10)
    p.add_argument("--every", type=float, default=4.0)
    p.add_argument("--duration", type=float, default=60.0)
    p.add_argument("--interval", type=float, default=0.5)
    a = p.parse_args()
    if a.summarize:
        raise SystemExit(summarize(a.summarize))
    if not (a.url and a.token and a.mode):
        p.error("--url, --token and --mode are required")
    print(json.dumps(asyncio.run(main_async(a))))


if __name__ == "__main__":
    main()
