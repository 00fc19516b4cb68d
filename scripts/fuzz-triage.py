#!/usr/bin/env python3
"""Groups libFuzzer crash artifacts of an rlx-fuzz-* target by stack
signature, minimizes one reproducer per group and classifies it.

  fuzz-triage.py --target mlir [--build build-fuzz] [--minimize SECONDS]
                 [--known tools/rlx-fuzz/known-upstream.txt] [--out DIR]
                 CRASH_FILE_OR_DIR...

Every artifact (crash-*, timeout-*, oom-*, leak-*, slow-unit-* files) is run
once through the target; its report gives the signature:
  check:<id>:<detail>     RLX-FUZZ CHECK FAILED [id] (a post-condition of the
                          target: invalid IR after a pass, no round trip, ...)
  fatal:<reason>          an LLVM fatal error (report_fatal_error)
  assert:<file>:<line>    an assertion
  <kind>:<frames>         an ASan/UBSan/libFuzzer report, by its top frames
                          (function names; module+offset where unsymbolized)
  timeout / oom           by the top frames of the report when it has one
The class is "RLX" when one of the first frames (past the sanitizer, libc,
assert and error-handling frames) is RLX's code (lib/, include/RLX), else
"upstream" (MLIR/LLVM frames only), or "harness" (tools/rlx-fuzz only).

For each group: DIR/<target>/<slug>/ holds the smallest reproducer
(`repro`), the minimized one (`repro.min`, with --minimize), the report
(`report.txt`) and the command that reproduces it (`command.txt`).
With --known, exits 1 when a group is not in the known list (lines
`<target> <regex searched in "<class> <signature>">  # note`; see
tools/rlx-fuzz/known-upstream.txt).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

SKIP_FUNCS = re.compile(
    r"^(__sanitizer|__asan|__ubsan|__interceptor|__interception|fuzzer::|abort$|raise$|"
    r"__pthread_kill_implementation|libc\.so|"
    r"__pthread_kill|pthread_kill|__GI_|__libc|__assert|__assert_fail|llvm::report_fatal_error|"
    r"llvm::llvm_unreachable_internal|llvm::reportFatal|"
    r"rlx_fuzz::checkFailed|fatalErrorHandler|malloc|calloc|realloc|free|operator new|"
    r"operator delete|memcpy|memmove|memset|strlen|__memcpy|__memmove|__memset|"
    r"std::__throw|__cxa|_Unwind|gsignal|__restore_rt|MallocHook|"
    r"llvm::sys::|SignalHandler)")


def env():
    e = dict(os.environ)
    # Triage sees every check, whatever the fuzzing run turned off.
    e.pop("RLX_FUZZ_SKIP", None)
    e.pop("RLX_FUZZ_STRICT", None)
    e.setdefault("ASAN_OPTIONS", "allow_user_poisoning=0:detect_leaks=1")
    sym = shutil.which("llvm-symbolizer-22") or "/usr/lib/llvm-22/bin/llvm-symbolizer"
    if os.path.exists(sym):
        e.setdefault("ASAN_SYMBOLIZER_PATH", sym)
        e.setdefault("UBSAN_SYMBOLIZER_PATH", sym)
        e["PATH"] = os.path.dirname(sym) + os.pathsep + e.get("PATH", "")
    return e


def run_target(binary: pathlib.Path, repro: pathlib.Path, timeout: int) -> str:
    cmd = [str(binary), f"-timeout={timeout}", "-rss_limit_mb=4096", str(repro)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=timeout * 3 + 30, env=env())
        return p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"") + (e.stderr or b"")
        return out.decode(errors="replace") + "\n==TRIAGE: hard timeout\n"



def frames(report: str):
    """(function, file-or-module) of the first stack in the report."""
    out = []
    started = False
    for line in report.splitlines():
        m = re.match(r"^\s*#(\d+) 0x[0-9a-f]+ (.*)$", line)
        if not m:
            if started and out:
                break
            continue
        if m.group(1) == "0" and started and out:
            break
        started = True
        rest = m.group(2).strip()
        fm = re.match(r"^in (.+?) (\S+?)(?::\d+(?::\d+)?)?(?: \(BuildId.*)?$", rest)
        if fm:
            func, where = fm.group(1), fm.group(2)
        else:
            mm = re.match(r"^\((\S+?)\+(0x[0-9a-f]+)\)", rest)
            if mm:
                func, where = os.path.basename(mm.group(1)) + "+" + mm.group(2), mm.group(1)
            else:
                func, where = rest, ""
        where = where.strip("()")
        # Drop parameter lists and template arguments for a stable name.
        name = re.sub(r"\(.*\)( const)?$", "", func)
        out.append((name, where))
    return out



def where_class(where: str) -> str:
    w = where
    if w.startswith(str(ROOT / "lib")) or w.startswith(str(ROOT / "include")) \
            or w.startswith(str(ROOT / "build-fuzz" / "include")) or "/include/RLX/" in w:
        return "rlx"
    if w.startswith(str(ROOT / "tools" / "rlx-fuzz")):
        return "harness"
    if "libMLIR" in w or "libLLVM" in w or "/usr/lib/llvm-" in w or "/usr/include" in w:
        return "upstream"
    return "other"


def classify(report: str):
    """(signature, class, top frames text)."""
    fr = [x for x in frames(report) if not SKIP_FUNCS.search(x[0])]
    top = [f for f, _ in fr[:4]]
    cls = "upstream"
    for f, w in fr[:8]:
        if f.startswith("LLVMFuzzerTestOneInput"):
            break
        if where_class(w) == "rlx":
            cls = "RLX"
            break
    if cls != "RLX" and fr and fr[0][0].startswith("LLVMFuzzerTestOneInput"):
        cls = "harness"
    # The API the target called into (the frame above LLVMFuzzerTestOneInput):
    # mlir::parseSourceFile, mlir::PassManager::run, mlir::rlx::importRLXJson...
    entry = ""
    for i, (f, _) in enumerate(fr):
        if f.startswith("LLVMFuzzerTestOneInput"):
            entry = fr[i - 1][0] if i > 0 else "LLVMFuzzerTestOneInput"
            break
    at = f"|in:{entry}" if entry else ""
    m = re.search(r"RLX-FUZZ CHECK FAILED \[([\w-]+)\]: (.*)", report)
    if m:
        detail = re.search(r"'([^']+)'", m.group(2))
        d = detail.group(1) if detail else ""
        if m.group(1).startswith("mlir-result"):
            d = ""  # the pipeline text varies with the param byte
        return f"check:{m.group(1)}" + (f":{d}" if d else ""), "RLX (check)", m.group(0)
    m = re.search(r"RLX-FUZZ: LLVM fatal error: (.*)", report)
    if m:
        reason = re.sub(r"\d+", "N", m.group(1).strip())[:120]
        return f"fatal:{reason}{at}", cls, m.group(0) + "\n  " + " <- ".join(top)
    m = re.search(r"Assertion `(.*)' failed", report)
    am = re.search(r"([\w./-]+\.(?:h|cpp|inc)):(\d+): .*Assertion", report)
    if m:
        loc = f"{os.path.basename(am.group(1))}:{am.group(2)}" if am else m.group(1)[:80]
        return f"assert:{loc}{at}", cls, m.group(0)[:300] + "\n  " + " <- ".join(top)
    m = re.search(r"runtime error: (.*)", report)
    um = re.search(r"([\w./-]+\.(?:h|cpp|inc)):(\d+):\d+: runtime error", report)
    if m:
        kind = re.sub(r"0x[0-9a-f]+|-?\d[\d.]*(?:e[+-]?\d+)?|'[^']*'", "N", m.group(1))[:60]
        loc = f"{os.path.relpath(um.group(1), ROOT) if um.group(1).startswith('/') else um.group(1)}:{um.group(2)}" if um else ""
        if um and where_class(um.group(1)) == "rlx":
            cls = "RLX"
        return f"ubsan:{kind}@{loc}{at}", cls, m.group(0)[:300] + "\n  " + " <- ".join(top)
    m = re.search(r"ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): ([\w-]+(?: signal)?)", report)
    kind = f"{m.group(1)}:{m.group(2)}" if m else ("timeout" if "TRIAGE: hard timeout" in report
                                                  else "no-crash")
    if "libFuzzer: timeout" in report or "TRIAGE: hard timeout" in report:
        kind = "timeout"
    if "out-of-memory" in report or "malloc limit" in report:
        kind = "oom"
    if kind == "libFuzzer:deadly signal" and "Segmentation" in report:
        kind = "segv"
    return f"{kind}:{'<-'.join(top[:3])}{at}", cls, (m.group(0) if m else kind) + "\n  " + \
        "\n  ".join(f"{f}  [{os.path.relpath(w, ROOT) if w.startswith(str(ROOT)) else os.path.basename(w)}]"
                    for f, w in fr[:6])


def slug(sig: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_.-]+", "_", sig)[:60].strip("_")
    return s + "-" + hashlib.sha1(sig.encode()).hexdigest()[:8]


def load_known(path: pathlib.Path | None):
    known = []
    if path and path.exists():
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            if len(parts) == 2:
                known.append((parts[0], parts[1].strip()))
    return known


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--build", default=str(ROOT / "build-fuzz"))
    ap.add_argument("--minimize", type=int, default=0, help="seconds per reproducer (0: off)")
    ap.add_argument("--known")
    ap.add_argument("--out")
    ap.add_argument("--timeout", type=int, default=25)
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    build = pathlib.Path(args.build).resolve()
    binary = build / "bin" / f"rlx-fuzz-{args.target}"
    out = pathlib.Path(args.out or build / "fuzz" / "triage") / args.target
    files = []
    for p in map(pathlib.Path, args.paths):
        if p.is_dir():
            files += sorted(x for x in p.iterdir() if x.is_file() and re.match(
                r"^(crash|timeout|oom|leak|slow-unit)-", x.name))
        elif p.is_file():
            files.append(p)
    groups: dict[str, dict] = {}
    for f in files:
        report = run_target(binary, f, args.timeout)
        sig, cls, top = classify(report)
        if sig.startswith("no-crash"):
            # Flaky or fixed since: keep it visible, by name.
            sig = "no-crash (does not reproduce)"
        g = groups.setdefault(sig, {"files": [], "class": cls, "top": top, "report": report})
        g["files"].append(f)
        if f.stat().st_size < min(x.stat().st_size for x in g["files"]) or len(g["files"]) == 1:
            g["report"], g["top"], g["class"] = report, top, cls
    known = load_known(pathlib.Path(args.known) if args.known else None)
    unknown = 0
    for sig, g in sorted(groups.items()):
        smallest = min(g["files"], key=lambda x: x.stat().st_size)
        d = out / slug(sig)
        d.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(smallest, d / "repro")
        (d / "report.txt").write_text(g["report"])
        repro = d / "repro"
        minp = d / "repro.min"
        if minp.exists() and classify(run_target(binary, minp, args.timeout))[0] == sig:
            repro = minp  # minimized by an earlier run
        elif args.minimize and not sig.startswith("no-crash"):
            try:
                subprocess.run([str(binary), "-minimize_crash=1",
                                f"-max_total_time={args.minimize}", f"-timeout={args.timeout}",
                                f"-exact_artifact_path={minp}", str(repro)],
                               capture_output=True, env=env(), timeout=args.minimize * 3 + 300)
            except subprocess.TimeoutExpired:
                pass  # keep what it wrote so far
            if minp.exists() and minp.stat().st_size <= repro.stat().st_size:
                # The minimized input must still give the same signature.
                if classify(run_target(binary, minp, args.timeout))[0] == sig:
                    repro = minp
                else:
                    minp.rename(d / "repro.min.other-signature")
        cmd = f"{binary} {repro}"
        (d / "command.txt").write_text(
            f"RLX_FUZZ_VERBOSE=1 {cmd}\n# or, for the tool itself: see README of tools/rlx-fuzz\n")
        is_known = any(t == args.target and re.search(pat, f"{g['class']} {sig}")
                       for t, pat in known)
        if not is_known and not sig.startswith("no-crash"):
            unknown += 1
        print(f"[{'known' if is_known else 'NEW'}] {args.target}: {sig}")
        print(f"    class: {g['class']}; {len(g['files'])} artifact(s); "
              f"reproducer: {repro} ({repro.stat().st_size} bytes)")
        print("    " + g["top"].replace("\n", "\n    "))
        print(f"    command: {cmd}")
    if not groups:
        print(f"{args.target}: no crash artifacts")
    if args.known:
        return 1 if unknown else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
