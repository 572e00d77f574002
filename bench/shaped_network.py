"""A Dask cluster whose workers are each on a "machine" of their own (a Linux network
namespace) behind a link of limited bandwidth: what the network between machines costs a run.

``python bench/shaped_network.py PUZZLE [--machines M] [--rates 1gbit,100mbit] [--repeat R]
[--memory-limit 4GB] [--warm PUZZLE] [--keep PREFIX]`` (as root: it makes network
namespaces and links, and shapes them with ``tc``'s token bucket, both ways). It starts,
as ``docs/scaling.md`` says to (its environment settings read from that page), a ``dask
scheduler`` in this namespace and one ``dask worker`` of one thread in each of the M
namespaces, each run in a directory of its own. After an unmeasured run of ``--warm``
(default PUZZLE), in which the workers load their compiled code, R times over it runs
``puzzlespace explore PUZZLE --scheduler ... --json --progress`` with every link unshaped
and at each rate, in turn; the depth counts must be the same in every run (``--keep``:
each run's layer lines in ``PREFIX-<run>-<link>.log``). Per run it prints the engine
seconds, their ratio to the unshaped run beside it, and the seconds of the layers outside
the slowest worker's visit of each (the visits do no network I/O, so this is where the
network shows, apart from this machine's drift between runs). The bytes between workers
of a run all cross links (one worker a machine), and each worker's share of them goes out
of its link and comes in by it: the "link time" is a worker's share of a run's bytes at
the link's rate, each way, the least the network can add to a run that did nothing else
meanwhile.

What it does not model: latency (the links are veth pairs, about 0.05 ms a round trip;
``tc``'s netem, which would add delay, is not in every kernel), and the CPU: every
"machine" shares this one's cores.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cost_model import parse_layers  # bench/, beside this script

ROOT = Path(__file__).resolve().parent.parent
NET = "10.78"  # machine i is NET.i.2, its link's other end NET.i.1
NAME = "psbench"
UNITS = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}


def sh(*command: str, check: bool = True) -> None:
    subprocess.run(command, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def rate_bits(rate: str) -> float:
    """Bits a second of a ``tc`` rate such as ``1gbit``."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(kbit|mbit|gbit)", rate)
    if not m:
        raise SystemExit(f"a rate is a number and kbit, mbit or gbit: {rate!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


@contextlib.contextmanager
def machines(count: int):
    """``count`` network namespaces, each linked to this one (routed between them);
    yields the (namespace, link device here, its address) of each; removed on exit."""
    made = []
    for i in range(1, count + 1):  # a run killed before its cleanup left them
        sh("ip", "link", "del", f"vpsb{i}", check=False)
        sh("ip", "netns", "del", f"{NAME}{i}", check=False)
    try:
        with open("/proc/sys/net/ipv4/ip_forward", "w") as f:
            f.write("1")
        for i in range(1, count + 1):
            ns, dev = f"{NAME}{i}", f"vpsb{i}"
            sh("ip", "netns", "add", ns)
            made.append((ns, dev, f"{NET}.{i}.2"))
            sh("ip", "link", "add", dev, "type", "veth", "peer", "name", "eth0", "netns", ns)
            sh("ip", "addr", "add", f"{NET}.{i}.1/24", "dev", dev)
            sh("ip", "link", "set", dev, "up")
            for command in (["ip", "addr", "add", f"{NET}.{i}.2/24", "dev", "eth0"], ["ip", "link", "set", "eth0", "up"],
                            ["ip", "link", "set", "lo", "up"], ["ip", "route", "add", "default", "via", f"{NET}.{i}.1"]):
                sh("ip", "netns", "exec", ns, *command)
        yield made
    finally:
        for ns, dev, _ in made:
            sh("ip", "link", "del", dev, check=False)
            sh("ip", "netns", "del", ns, check=False)


def shape(links: list[tuple[str, str, str]], rate: str | None) -> None:
    """Limit every link to ``rate`` each way (a token bucket on both its ends), or lift it."""
    for ns, dev, _ in links:
        for prefix, device in (([], dev), (["ip", "netns", "exec", ns], "eth0")):
            if rate is None:
                sh(*prefix, "tc", "qdisc", "del", "dev", device, "root", check=False)
            else:
                sh(*prefix, "tc", "qdisc", "replace", "dev", device, "root", "tbf", "rate", rate, "burst", "256kb",
                   "latency", "50ms")


@contextlib.contextmanager
def cluster(links, work: Path, memory_limit: str):
    """A scheduler here and a worker of one thread in each namespace, started as
    docs/scaling.md says; yields the scheduler's address."""
    recipe = (ROOT / "docs" / "scaling.md").read_text()
    settings = dict(re.findall(r"^(DASK_DISTRIBUTED__\w+)=(\S+) \\$", recipe, re.M))
    address_file = work / "scheduler.json"
    dask = [sys.executable, "-m", "dask"]
    quiet = dict(start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = [subprocess.Popen([*dask, "scheduler", "--host", f"{NET}.1.1", "--port", "0", "--no-dashboard",
                                 "--scheduler-file", str(address_file)], cwd=work, **quiet)]
    try:
        deadline = time.monotonic() + 60
        while not address_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        for ns, _, host in links:
            home = work / ns
            home.mkdir()
            started.append(subprocess.Popen(
                ["ip", "netns", "exec", ns, *dask, "worker", "--scheduler-file", str(address_file), "--host", host,
                 "--nworkers", "1", "--nthreads", "1", "--memory-limit", memory_limit, "--no-dashboard",
                 "--local-directory", str(home / "dask")], cwd=home, env=dict(os.environ, **settings), **quiet))
        address = json.loads(address_file.read_text())["address"]
        import distributed

        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(len(links), timeout=120)
        yield address
    finally:
        for process in reversed(started):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)


def explore(puzzle: str, address: str, keep: Path | None = None) -> dict:
    """One ``explore --scheduler`` run: its JSON, with from its layer lines (kept in
    ``keep``) the bytes between workers and the seconds outside the slowest worker's
    visits (which do no network I/O) summed over the layers."""
    got = subprocess.run([sys.executable, "-m", "puzzlespace", "explore", puzzle, "--scheduler", address, "--json",
                          "--progress"], capture_output=True, text=True, check=False)
    if got.returncode != 0:
        raise SystemExit(f"explore failed:\n{got.stderr[-3000:]}")
    if keep is not None:
        keep.write_text(got.stderr)
    result = json.loads(got.stdout)
    layers = parse_layers(got.stderr)
    result["between"], result["outside"] = layers[:, 2].sum(), (layers[:, 1] - layers[:, 3]).sum()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("puzzle")
    parser.add_argument("--machines", type=int, default=2)
    parser.add_argument("--rates", default="1gbit,100mbit", help="comma-separated tc rates")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory-limit", default="4GB", help="each worker's (dask worker --memory-limit)")
    parser.add_argument("--warm", help="the puzzle of an unmeasured first run, in which the workers load their "
                        "compiled code (default: PUZZLE itself; 'none': no such run)")
    parser.add_argument("--keep", help="write each run's layer lines to PREFIX-<run>-<link>.log")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))  # so that the namespaces are removed
    if os.geteuid() != 0:
        raise SystemExit("run it as root: it makes network namespaces and shapes their links")
    rates = [None, *args.rates.split(",")]
    for rate in rates[1:]:
        rate_bits(rate)
    print(f"# {args.puzzle} on {args.machines} machines (network namespaces), one worker of one thread each; "
          f"nproc {os.cpu_count()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    counts, rows = None, []
    with tempfile.TemporaryDirectory() as tmp, machines(args.machines) as links, \
            cluster(links, Path(tmp), args.memory_limit) as address:
        if args.warm != "none":
            explore(args.warm or args.puzzle, address)
        for r in range(args.repeat):
            base = None
            for rate in rates:
                shape(links, rate)
                got = explore(args.puzzle, address, args.keep and Path(f"{args.keep}-{r}-{rate or 'unshaped'}.log"))
                shape(links, None)
                if counts is None:
                    counts = got["depth_counts"]
                if got["depth_counts"] != counts:
                    raise SystemExit(f"depth counts differ at rate {rate}: {got['depth_counts']} != {counts}")
                base = base or got["seconds"]
                link = 0.0 if rate is None else got["between"] / args.machines * 8 / rate_bits(rate)
                rows.append((r, rate or "unshaped", got["seconds"], got["seconds"] / base, got["outside"],
                             got["between"], link))
                print(f"run {r} {rate or 'unshaped'}: {got['seconds']:.2f} s, ratio {got['seconds'] / base:.3f}, "
                      f"{got['outside']:.2f} s outside the visits, {got['between'] / 1e6:.1f} MB between workers, "
                      f"link time {link:.2f} s", flush=True)
    print("\n| run | link | engine s | ratio to unshaped | s outside the slowest visits | MB between workers "
          "| link time s (a worker's share, each way) |")
    print("|---|---|---|---|---|---|---|")
    for r, rate, seconds, ratio, outside, between, link in rows:
        print(f"| {r} | {rate} | {seconds:.2f} | {ratio:.3f} | {outside:.2f} | {between / 1e6:.1f} | {link:.2f} |")


if __name__ == "__main__":
    main()
