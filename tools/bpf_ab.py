#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A/B the BPF cost per IO of two (or more) iotracer binaries, side by side.

Every binary traces the same fio run at the same time (so machine noise hits
them alike), with BPF run-time statistics on (BPF_ENABLE_STATS, held as an fd:
they turn off when this script exits). Each binary prints its per-program
run_cnt / run_time_ns at exit (-v); this script divides by fio's IO count.
Programs attached later on a tracepoint run after the earlier ones and find
the kernel's cache lines warm: with --swap the attach order is reversed in a
second round and the two rounds are averaged.

  sudo tools/bpf_ab.py --bin base=/tmp/iotracer-base --bin new=./iotracer \\
       [--workload psync|uring] [--runtime 5] [--layers block] [--swap]

Needs root, fio, a loop device over /dev/shm (made here, removed at exit).
"""
import argparse
import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

SYS_BPF = 321  # x86_64
BPF_ENABLE_STATS = 32
BPF_STATS_RUN_TIME = 0

FIO = {
    "psync": "--ioengine=psync --iodepth=1",
    "uring": "--ioengine=io_uring --iodepth=32",
}


def stats_on():
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint8 * 128)()
    ctypes.c_uint32.from_buffer(attr, 0).value = BPF_STATS_RUN_TIME
    fd = libc.syscall(SYS_BPF, BPF_ENABLE_STATS, attr, 128)
    if fd < 0:
        sys.exit("BPF_ENABLE_STATS: " + os.strerror(ctypes.get_errno()))
    return fd


def bpf_prog_fds(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:bpf-prog":
                n += 1
        except OSError:
            pass
    return n


def wait_attached(procs):
    """Until every tracer's bpf-prog fd count is stable for 1 s."""
    last, stable = None, 0
    for _ in range(300):
        time.sleep(0.1)
        for p in procs:
            if p.poll() is not None:
                sys.exit(f"tracer exited early: {p.args}")
        cur = [bpf_prog_fds(p.pid) for p in procs]
        stable = stable + 1 if cur == last and all(cur) else 0
        last = cur
        if stable >= 10:
            return
    sys.exit("tracers did not attach")


def parse_stats(text):
    progs, on = {}, False
    for line in text.splitlines():
        if line.startswith("PROGRAM "):
            on = True
            continue
        m = re.match(r"^(\S+)\s+(\d+)\s+(\d+)\s+\S+\s+(\d+)$", line) if on else None
        if m:
            progs[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return progs


def one_round(bins, dev, args):
    procs, errs = [], []
    for name, path in bins:
        err = tempfile.TemporaryFile()
        cmd = [path, "-v", "-q", "--no-live", "-j", "/dev/null", "-d", dev]
        if args.layers:
            cmd += ["-l", args.layers]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err))
        errs.append(err)
        wait_attached([procs[-1]])
    fio = subprocess.run(
        ["fio", "--name=ab", "--filename=" + dev, "--bs=4k", "--direct=1",
         "--rw=randread", "--time_based", f"--runtime={args.runtime}",
         "--output-format=json"] + FIO[args.workload].split(),
        capture_output=True, text=True, check=True)
    j = json.loads(fio.stdout)["jobs"][0]["read"]
    ios, iops = j["total_ios"], j["iops"]
    res = {}
    for (name, _), p, err in zip(bins, procs, errs):
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        err.seek(0)
        res[name] = parse_stats(err.read().decode(errors="replace"))
    return ios, iops, res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", action="append", required=True, help="NAME=PATH")
    ap.add_argument("--workload", choices=FIO, default="psync")
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--layers", default="")
    ap.add_argument("--swap", action="store_true")
    ap.add_argument("--size", default="256M")
    args = ap.parse_args()
    bins = [tuple(b.split("=", 1)) for b in args.bin]

    img = "/dev/shm/iotracer-ab.img"
    subprocess.run(["fio", "--name=fill", "--filename=" + img, "--size=" + args.size,
                    "--rw=write", "--bs=1M", "--output=/dev/null"], check=True)
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", img],
                         capture_output=True, text=True, check=True).stdout.strip()
    os.unlink(img)
    fd = stats_on()
    try:
        rounds = [bins] + ([bins[::-1]] if args.swap else [])
        tot = {n: {} for n, _ in bins}
        all_ios = 0
        for order in rounds:
            ios, iops, res = one_round(order, dev, args)
            all_ios += ios
            print(f"round {[n for n, _ in order]}: {ios} IOs, {iops:.0f} IOPS")
            for n, progs in res.items():
                for prog, (cnt, ns) in progs.items():
                    c, t = tot[n].get(prog, (0, 0))
                    tot[n][prog] = (c + cnt, t + ns)
    finally:
        os.close(fd)
        subprocess.run(["losetup", "-d", dev])

    names = [n for n, _ in bins]
    progs = sorted({p for n in names for p, (c, _) in tot[n].items() if c},
                   key=lambda p: -max(tot[n].get(p, (0, 0))[1] for n in names))
    print(f"{args.workload} {args.layers or 'all layers'}: ns/IO (runs/IO, ns/run)")
    print(f"{'program':34}" + "".join(f"{n:>26}" for n in names))
    for p in progs:
        row = f"{p:34}"
        for n in names:
            c, t = tot[n].get(p, (0, 0))
            cell = f"{t / all_ios:7.1f} ({c / all_ios:5.2f},{t / c if c else 0:5.0f})"
            row += f"{cell:>26}"
        print(row)
    row = f"{'TOTAL ns/IO':34}"
    for n in names:
        row += f"{sum(t for _, t in tot[n].values()) / all_ios:26.1f}"
    print(row)


if __name__ == "__main__":
    main()
