"""The remote cache tier: a cold build served by a warm remote, and what an
unreachable or slow remote costs.

Goals, for a generated 20-kernel module and Kiln's default architecture
list, built as users build it (`kiln build --module`, as add_python_kernels()
and kiln.setuptools run it: fat binaries and host code for the CPU engine,
packed into an extension module), on a machine whose local cache is empty: a
build served by a warm remote (Redis or nginx WebDAV) takes at most 10% of
the same build without a remote (which compiles everything); an unreachable
remote adds at most 5% to it.

    python3 bench/remote_cache.py [--kiln build/driver/kiln] [--repeats 5] [--warmups 1]
                                  [--kernels 20] [--jobs 2] [--arch LIST] [--delay 1.0]
                                  [--distance 0.001] [--json FILE] [--quick]

--quick: 2 kernels, --arch 80, 3 repeats, no warm-up: checks that the
harness runs; its numbers mean little.

Every measurement is a fresh `kiln build kernels.py --module kernels
--ext-suffix SUFFIX -o TMP -v -j J` process (wall time; SUFFIX is the running
Python's EXT_SUFFIX, which add_python_kernels() and kiln.setuptools pass too)
with an empty local cache of its own, in rounds that take each configuration
once, so that drift in the machine's load spreads over all of them:

* no remote: compiles everything (the baseline);
* warm local cache: the same build from a local cache that holds every
  entry, no remote: what a remote hit cannot undercut (the process, the
  front end, writing the extension module);
* warm Redis, warm WebDAV: `--remote-cache URL` of a server that machine A
  filled with the same build (once, untimed); every lookup must be a remote
  hit, or the script stops;
* warm Redis / WebDAV, --distance away: the same servers behind a proxy
  that holds back each answer --distance seconds (1 ms: a server across a
  data centre rather than on loopback), which shows what round trips cost;
* unreachable Redis, unreachable WebDAV: a 127.0.0.1 port nothing listens
  on (connections are refused at once);
* Redis / WebDAV answering late: the warm server behind a proxy that holds
  back each answer --delay seconds (the tier's default time-outs).

The servers are the test rig's (tests/cache/remote/remote_servers.py):
redis-server and nginx on loopback, nothing persisted. The measuring
machine signs with machine A's key (KILN_SIGNING_KEY) and trusts it, so
that what it uploads to a remote the next round reads is still trusted.
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

BENCH = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent / "tests" / "cache" / "remote"))

import bench_common as bc  # noqa: E402
from cache_speed import module_source  # noqa: E402
from remote_servers import ClosedPort, RedisServer, SlowProxy, WebDavServer  # noqa: E402

STATUS = re.compile(r"^  (remote hit|local hit|compiled) ", re.M)
STATUSES = ("remote hit", "local hit", "compiled")


class Bench:
    def __init__(self, options, kiln, work):
        self.options = options
        self.kiln = kiln
        self.work = work
        self.module = work / "kernels.py"
        self.module.write_text(module_source(options.kernels))
        self.env = {k: v for k, v in bc.bench_env().items()
                    if not k.startswith("KILN_CACHE") and k not in (
                        "KILN_CONFIG_DIR", "KILN_REMOTE_CACHE", "KILN_SIGNING_KEY",
                        "KILN_TRUSTED_KEYS")}
        self.env["KILN_CONFIG_DIR"] = str(work / "config")
        self.builds = 0
        self.suffix = sysconfig.get_config_var("EXT_SUFFIX")
        # A local cache every build of the module hits, for the warm local row.
        self.warm_cache = work / "warm-local-cache"
        self.key = work / "machine-a.key"
        done = self.kiln_run(["cache", "key", "generate", "--name", "machine-a",
                              "--file", self.key])
        self.public_line = done.stdout.strip().splitlines()[-1]
        trusted = work / "trusted-keys"
        trusted.write_text(self.public_line + "\n")
        self.env["KILN_SIGNING_KEY"] = str(self.key)
        self.env["KILN_TRUSTED_KEYS"] = str(trusted)

    def kiln_run(self, args, env=None):
        done = subprocess.run([self.kiln, *map(str, args)], capture_output=True, text=True,
                              env=env or self.env)
        if done.returncode != 0:
            raise SystemExit(f"kiln {' '.join(map(str, args))} failed ({done.returncode}):\n"
                             f"{done.stderr[-4000:]}")
        return done

    def build(self, remote_args, cache=None):
        """(wall seconds, lookups by status) of a build with an empty local
        cache, or with the local cache `cache`, which it keeps."""
        self.builds += 1
        kept = cache is not None
        cache = cache or self.work / f"cache{self.builds}"
        out = self.work / f"out{self.builds}"
        env = dict(self.env, KILN_CACHE_DIR=str(cache))
        arch = ["--arch", self.options.arch] if self.options.arch else []
        command = [self.kiln, "build", str(self.module), "--module", "kernels", "--ext-suffix",
                   self.suffix, *arch, "-o", str(out), "-v", "-j", str(self.options.jobs),
                   *remote_args]
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        elapsed = time.perf_counter() - began
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n"
                             f"{done.stderr[-4000:]}")
        found = STATUS.findall(done.stderr)
        if not kept:
            shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        return elapsed, {status: found.count(status) for status in STATUSES}


def supports_remote_cache(kiln):
    done = subprocess.run([kiln, "build", "--help"], capture_output=True, text=True)
    return "--remote-cache" in done.stdout


def percent(value, base):
    if base != base or value != value or not base:
        return "-"
    return f"{value / base * 100:.1f}%"


def overhead(value, base):
    if base != base or value != value or not base:
        return "-"
    return f"{(value / base - 1) * 100:+.1f}%"


def spread_text(values):
    return (f"{bc.ms(bc.median(values))} ({bc.ms(min(values))} – {bc.ms(max(values))})"
            if values else "-")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", default=bc.default_kiln())
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmups", type=int, default=1, help="untimed rounds first")
    parser.add_argument("--kernels", type=int, default=20, help="kernels in the generated module")
    parser.add_argument("--jobs", type=int, default=2, help="-j of every build")
    parser.add_argument("--arch", default=None, help="default: Kiln's default list")
    parser.add_argument("--delay", type=float, default=1.0,
                        help="seconds the slow remote holds back each answer")
    parser.add_argument("--distance", type=float, default=0.001,
                        help="seconds the distant warm remote holds back each answer")
    parser.add_argument("--json", help="also write the raw measurements here")
    parser.add_argument("--quick", action="store_true",
                        help="2 kernels, --arch 80, 3 repeats, no warm-up")
    options = parser.parse_args()
    if options.quick:
        options.kernels, options.arch, options.repeats, options.warmups = 2, "80", 3, 0

    version = bc.wait_for_kiln(options.kiln)
    work = pathlib.Path(tempfile.mkdtemp(prefix="kiln-remote-bench-"))
    kiln = bc.snapshot(options.kiln, work)
    if not supports_remote_cache(kiln):
        shutil.rmtree(work, ignore_errors=True)
        raise SystemExit(f"{options.kiln} has no --remote-cache: "
                         "build Kiln with the remote cache tier")
    servers = []
    try:
        bench = Bench(options, kiln, work)
        redis = RedisServer().start()
        servers.append(redis)
        webdav = WebDavServer().start()
        servers.append(webdav)
        closed = ClosedPort()
        servers.append(closed)
        slow_redis = SlowProxy(("127.0.0.1", redis.port), options.delay).start()
        servers.append(slow_redis)
        slow_webdav = SlowProxy(("127.0.0.1", webdav.port), options.delay).start()
        servers.append(slow_webdav)
        far_redis = SlowProxy(("127.0.0.1", redis.port), options.distance).start()
        servers.append(far_redis)
        far_webdav = SlowProxy(("127.0.0.1", webdav.port), options.distance).start()
        servers.append(far_webdav)

        late = f"answering after {options.delay:g} s"
        away = f"{options.distance * 1000:g} ms away"
        configurations = {
            "no remote": [],
            "warm local cache": [],
            "warm Redis": ["--remote-cache", redis.url],
            "warm WebDAV": ["--remote-cache", webdav.url],
            f"warm Redis, {away}": ["--remote-cache", far_redis.url_for(redis.url)],
            f"warm WebDAV, {away}": ["--remote-cache", far_webdav.url_for(webdav.url)],
            "unreachable Redis": ["--remote-cache", f"redis://127.0.0.1:{closed.port}"],
            "unreachable WebDAV": ["--remote-cache", f"http://127.0.0.1:{closed.port}/cache"],
            f"Redis {late}": ["--remote-cache", slow_redis.url_for(redis.url)],
            f"WebDAV {late}": ["--remote-cache", slow_webdav.url_for(webdav.url)],
        }
        # Machine A fills both warm servers and the warm local cache; a first
        # reader checks they serve everything.
        bench.build([], cache=bench.warm_cache)
        _, statuses = bench.build([], cache=bench.warm_cache)
        if statuses["local hit"] == 0 or statuses["local hit"] != sum(statuses.values()):
            raise SystemExit(f"warm local cache: a second build got {statuses}, "
                             "not every lookup a local hit")
        for name in ("warm Redis", "warm WebDAV"):
            bench.build(configurations[name])
        for name in (name for name in configurations if name.startswith("warm ")
                     and name != "warm local cache"):
            _, statuses = bench.build(configurations[name])
            if statuses["remote hit"] == 0 or statuses["remote hit"] != sum(statuses.values()):
                raise SystemExit(f"{name}: a build after the remote was filled got {statuses}, "
                                 "not every lookup a remote hit")

        times = {name: [] for name in configurations}
        lookups = {}
        for round_number in range(-options.warmups, options.repeats):
            for name, remote_args in configurations.items():
                local = bench.warm_cache if name == "warm local cache" else None
                elapsed, statuses = bench.build(remote_args, cache=local)
                lookups[name] = statuses
                if round_number >= 0:
                    times[name].append(elapsed)
    finally:
        for server in reversed(servers):
            if isinstance(server, ClosedPort):
                server.close()
            else:
                server.stop()
        shutil.rmtree(work, ignore_errors=True)

    base = bc.median(times["no remote"])
    # name -> (goal as printed, the largest ratio to the baseline that meets it)
    goals = {"warm Redis": ("≤ 10%", 0.10), "warm WebDAV": ("≤ 10%", 0.10),
             "unreachable Redis": ("≤ +5%", 1.05), "unreachable WebDAV": ("≤ +5%", 1.05)}
    rows = []
    for name, values in times.items():
        value = bc.median(values)
        if name.startswith("warm"):
            compared = percent(value, base)
        elif name == "no remote":
            compared = "100%"
        else:
            compared = overhead(value, base)
        goal = "-"
        if name in goals:
            text, bound = goals[name]
            goal = f"{text}: {'met' if value / base <= bound else 'missed'}"
        counts = lookups[name]
        rows.append([name, spread_text(values), compared, goal,
                     " / ".join(str(counts[s]) for s in STATUSES)])

    print("## Remote cache: a cold build served by a warm remote; an unreachable or slow remote\n")
    print(f"Command: `{bc.command_line()}`\n")
    print(f"Machine: {bc.machine_line(version)}; load average {bc.load_average()}.\n")
    print(f"A generated module of {options.kernels} kernels (one specialization each), "
          f"architectures: {options.arch or 'Kiln default list'}; each build a fresh "
          f"`kiln build --module kernels --ext-suffix {bench.suffix} -v -j {options.jobs}` "
          "process with an empty local cache (the warm local row: a full one); "
          f"median (min – max) of {options.repeats} rounds after {options.warmups} "
          "warm-up round(s). "
          "Servers on loopback (redis-server, nginx WebDAV); the distant and late ones behind a "
          f"proxy that holds back each answer {options.distance * 1000:g} ms or "
          f"{options.delay:g} s. Goals: served by a warm remote, at most "
          "10% of the build without a remote; with an unreachable remote, at most 5% more.\n")
    print(bc.table(["remote", "wall time", "of no remote", "goal",
                    "lookups (last round): remote hit / local hit / compiled"], rows,
                   align="lrrrr"))
    bc.write_json(options.json, {
        "kernels": options.kernels, "arch": options.arch or "default", "jobs": options.jobs,
        "repeats": options.repeats, "warmups": options.warmups, "delay": options.delay,
        "distance": options.distance,
        "times": times, "lookups": lookups,
        "summary": {name: bc.spread(values) for name, values in times.items()}})


if __name__ == "__main__":
    main()
