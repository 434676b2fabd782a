#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""core-diff.py PID A B C - compare the crit JSON (crit decode) of the
core-*.img files of three dumps of one idle process (suite-inner.sh
crit_case): A and B native-mode dumps (core images as criu wrote them), C a
takeover dump (the plugin restores the POSIX timers; at dump it leaves
criu's core images as criu wrote them, and takes the timers out only while
it restores).

Checks, one line each, "ok NAME[: detail]" or "bad NAME: what differs":
  control        A == B with tc.timers.posix deleted (two dumps of the idle
                 process differ in nothing else: the method is sound)
  native-timers  A's core-PID.img holds POSIX timers
  timers-kept    C's core-PID.img holds as many
  same-cores     C == A with tc.timers.posix deleted (whose remaining times
                 differ from dump to dump), every core-*.img
Every comparison leaves out tc.timers.posix and the fields of UNCONTROLLED,
which depend on the CPU at the moment of the dump and not on criu or the
plugin; an "ok" line names those that differed.
Exit 1 when any is bad."""
import json
import os
import sys


def load(d):
    out = {}
    for f in sorted(os.listdir(d)):
        if f.startswith("core-") and f.endswith(".json"):
            with open(os.path.join(d, f)) as fh:
                out[f] = json.load(fh)
    return out


def posix(img):
    n = 0
    for e in img.get("entries", []):
        n += len(e.get("tc", {}).get("timers", {}).get("posix", []))
    return n


def without_posix(img):
    img = json.loads(json.dumps(img))
    for e in img.get("entries", []):
        t = e.get("tc", {}).get("timers")
        if isinstance(t, dict):
            t.pop("posix", None)
    return img


# Fields of a core image that two dumps of one idle process may disagree on
# for reasons no dumper controls, each with its reason.  A path is the keys
# below an entry of "entries".
UNCONTROLLED = {
    ("thread_info", "fpregs", "xsave", "xstate_bv"):
        "the XSAVE header's XSTATE_BV (x86): a component's bit is clear while the "
        "CPU holds that component in its initial state (XINUSE, Intel SDM vol. 1 "
        "13.6), so whether the thread ran x87/SSE code since its last context "
        "switch decides 162 or 163; the registers themselves are still compared",
}


def uncontrolled_diffs(x, y):
    """Human-readable differences of the UNCONTROLLED fields of two images."""
    out = []
    for i, (ex, ey) in enumerate(zip(x.get("entries", []), y.get("entries", []))):
        for path in UNCONTROLLED:
            vx, vy = ex, ey
            for k in path:
                vx = vx.get(k) if isinstance(vx, dict) else None
                vy = vy.get(k) if isinstance(vy, dict) else None
            if vx != vy:
                out.append(f"{'.'.join(path)} {vx!r} vs {vy!r}")
    return out


def without_uncontrolled(img):
    for e in img.get("entries", []):
        for path in UNCONTROLLED:
            d = e
            for k in path[:-1]:
                d = d.get(k) if isinstance(d, dict) else None
            if isinstance(d, dict):
                d.pop(path[-1], None)
    return img


def diffs(a, b, path=""):
    """Paths where a and b differ (first few)."""
    if type(a) is not type(b):
        return [path or "/"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}.{k} ({'only in first' if k in a else 'only in second'})")
            else:
                out += diffs(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path} (length {len(a)} vs {len(b)})"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += diffs(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [f"{path} ({a!r} vs {b!r})"]


def compare(x, y, ignored=None):
    """Differences of two dumps' core images but for tc.timers.posix and
    UNCONTROLLED; what differed of the latter goes to ignored."""
    out = []
    for f in sorted(set(x) | set(y)):
        if f not in x or f not in y:
            out.append(f"{f} missing in one dump")
            continue
        if ignored is not None:
            ignored += [f + ":" + p for p in uncontrolled_diffs(x[f], y[f])]
        out += [f + ":" + p for p in diffs(without_uncontrolled(without_posix(x[f])),
                                          without_uncontrolled(without_posix(y[f])))]
    return out


def main():
    pid, a, b, c = sys.argv[1], load(sys.argv[2]), load(sys.argv[3]), load(sys.argv[4])
    leader = f"core-{pid}.json"
    bad = 0

    def report(name, problems, detail=""):
        nonlocal bad
        if problems:
            bad += 1
            print(f"bad {name}: " + "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""))
        else:
            print(f"ok {name}{': ' + detail if detail else ''}")

    if leader not in a or leader not in c:
        print(f"bad files: no {leader} in A or C (A has {sorted(a)}, C has {sorted(c)})")
        return 1
    def left_out(ign):
        return f"; left out, differing: {', '.join(ign[:3])}" if ign else ""

    ign = []
    report("control", compare(a, b, ign), f"two native dumps equal but for tc.timers.posix ({len(a)} core images){left_out(ign)}")
    na, nc = posix(a[leader]), posix(c[leader])
    report("native-timers", [] if na > 0 else ["no tc.timers.posix in the native dump"], f"{na} POSIX timers in native core-{pid}.img")
    report("timers-kept", [] if nc == na else [f"{nc} POSIX timers in the takeover core-{pid}.img, {na} in the native one"],
           f"{nc} POSIX timers in takeover core-{pid}.img too: criu's own, the plugin changes no core image at dump")
    ign = []
    report("same-cores", compare(a, c, ign), f"takeover core images == native ones but for the timers' remaining time{left_out(ign)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
