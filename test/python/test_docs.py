"""Every command in README.md and docs/*.md, run as written, in order.

The documents are the user's first contact with the tools: commands that
cannot be followed (missing inputs, missing flags, stale outputs) were found
by trying them. Here each document's shell blocks run in order in one
scratch directory that looks like a checkout (the repository's files, the
build, the venv and ../shared linked in), so a command may use what an
earlier one wrote, exactly as a reader would:

- ```sh blocks: every command must exit 0 (comments are explanations);
- ```console blocks: `$ ` starts a command (`> ` continues it), the lines
  after it are its claimed output, each of which must match a line of what
  it printed, in order; `...` stands for any text (timings, addresses), a
  line of only `...` for any number of lines. A
  claimed `error:` allows exit status 1, never a crash;
- ```python blocks run with the venv's interpreter and the build's package;
- `<!-- doc-test: skip: reason -->` before a block says why it does not run
  here (it builds or installs what the CI setup already did);
- `<!-- doc-test: file: name -->` before a block writes it to that file (an
  input the next commands read).

$HOME is the scratch directory, so commands that install into $HOME stay
inside it.
"""
from __future__ import annotations

import os
import pathlib
import re
import subprocess

import pytest

from harness import BUILD, ROOT, shared_dir

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DIRECTIVE = re.compile(r"<!--\s*doc-test:\s*(skip|file):(.*?)-->")
FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(path: pathlib.Path):
    """(language, text lines, directive) of every fenced block; the directive
    is ("skip", reason), ("file", name) or None."""
    lines = path.read_text().splitlines()
    i, pending = 0, None
    while i < len(lines):
        m = DIRECTIVE.search(lines[i])
        if m:
            pending = (m.group(1), m.group(2).strip())
            i += 1
            continue
        f = FENCE.match(lines[i])
        if not f:
            if lines[i].strip():
                pending = None
            i += 1
            continue
        lang, body = f.group(1), []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        yield lang, body, pending
        pending = None


def sh_commands(body):
    """Commands of an sh block: continuation lines joined, comments dropped."""
    cmds, cur = [], ""
    for line in body:
        stripped = line.split(" #")[0].rstrip() if not line.lstrip().startswith("#") else ""
        if not stripped.strip() and not cur:
            continue
        cur += stripped[:-1] + " " if stripped.endswith("\\") else stripped
        if not stripped.endswith("\\"):
            if cur.strip():
                cmds.append(cur.strip())
            cur = ""
    return cmds


def console_commands(body):
    """(command, expected output lines) pairs of a console block."""
    out = []
    for line in body:
        if line.startswith("$ "):
            out.append([line[2:], []])
        elif line.startswith("> ") and out and not out[-1][1]:
            out[-1][0] += "\n" + line[2:]
        elif out:
            out[-1][1].append(line)
    return [(c.replace("\\\n", " "), e) for c, e in out]


def norm(s: str) -> str:
    return " ".join(s.split())


def matches(expected: str, actual: str) -> bool:
    parts = [re.escape(norm(p)) for p in norm(expected).split("...")]
    return re.search("^" + r"\s*.*?\s*".join(parts) + "$", norm(actual)) is not None


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A directory that looks like a checkout next to ../shared."""
    base = tmp_path_factory.mktemp("docs")
    repo = base / "repo"
    repo.mkdir()
    for entry in ROOT.iterdir():
        # Not the build trees nor what commands here write (out/, plan/).
        if entry.name in (".git", "build", "out", "plan", ".pytest_cache") or \
                entry.name.startswith("build-"):
            continue
        (repo / entry.name).symlink_to(entry)
    (repo / "build").symlink_to(BUILD)
    shared = shared_dir()
    if shared is None:
        pytest.skip("../shared not found: the documents use its model configs")
    (base / "shared").symlink_to(shared)
    return repo


def run(cmd: str, cwd: pathlib.Path, python: bool = False):
    # docs/tensor-parallel.md runs mpirun, which CI runs as root.
    env = dict(os.environ, HOME=str(cwd.parent),
               PYTHONPATH=str(BUILD / "python_packages"),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               PATH=f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}")
    argv = [str(ROOT / ".venv" / "bin" / "python"), "-c", cmd] if python else ["bash", "-c", cmd]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_document_commands(doc, checkout):
    ran = 0
    for lang, body, directive in blocks(doc):
        if directive and directive[0] == "skip":
            assert directive[1], f"{doc.name}: a doc-test skip needs a reason"
            continue
        if directive and directive[0] == "file":
            (checkout / directive[1]).write_text("\n".join(body) + "\n")
            continue
        if lang in ("sh", "bash"):
            for cmd in sh_commands(body):
                proc = run(cmd, checkout)
                assert proc.returncode == 0, f"{doc.name}: `{cmd}` exited {proc.returncode}:\n{proc.stderr[-3000:]}"
                ran += 1
        elif lang == "console":
            for cmd, expected in console_commands(body):
                proc = run(cmd, checkout)
                wants_error = any("error:" in e for e in expected)
                ok = proc.returncode == 0 or (wants_error and proc.returncode == 1)
                assert ok, f"{doc.name}: `{cmd}` exited {proc.returncode}:\n{proc.stderr[-3000:]}"
                actual = (proc.stdout + proc.stderr).splitlines()
                pos = 0
                # A line that is only `...` stands for any number of lines.
                for want in (e for e in expected if e.strip() not in ("", "...")):
                    while pos < len(actual) and not matches(want, actual[pos]):
                        pos += 1
                    assert pos < len(actual), (f"{doc.name}: `{cmd}` did not print, in order:\n"
                                               f"  {want}\nit printed:\n" + "\n".join(actual[-60:]))
                    pos += 1
                ran += 1
        elif lang == "python":
            proc = run("\n".join(body), checkout, python=True)
            assert proc.returncode == 0, f"{doc.name}: python block failed:\n{proc.stderr[-3000:]}"
            ran += 1
    if doc.name == "README.md":
        assert ran >= 20, ran  # the README's tour is mostly commands


def test_readme_skips_only_what_ci_does_elsewhere():
    """The blocks that do not run here, and why: nothing else is skipped."""
    reasons = [d[1] for _, _, d in blocks(ROOT / "README.md") if d and d[0] == "skip"]
    assert len(reasons) == 4, reasons
    assert all(r for r in reasons)
