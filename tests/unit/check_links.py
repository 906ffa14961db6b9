#!/usr/bin/env python3
"""check_links.py SOURCE_ROOT - the tree's references hold.

Fails (exit 1, one line per finding) when
  - a document (README.md, docs/*.md) links to a file that does not exist,
    or to a #heading that the target (or the document itself) does not
    have; a `path` in backquotes that names a repository file counts too;
  - a source file of lstack/, ltran/, tools/, tests/, scripts/ or bench/
    names, in a comment, a repository file that does not exist, or a
    docs/*.md#anchor that the document does not have.
Also checks itself first: a planted bad link and a planted bad path must be
reported. TAP output; stdlib only; no root.
"""
import ast
import io
import os
import re
import subprocess
import sys
import tempfile
import tokenize

DOC_GLOBS = ("README.md", "docs")
SRC_DIRS = ("lstack", "ltran", "tools", "tests", "scripts", "bench")
SRC_EXT = (".c", ".h", ".def", ".sh", ".py")
# A path token: starts with one of the tree's folders, ends with a file name.
PREFIXES = ("lstack", "ltran", "tools", "tests", "scripts", "docs", "bench", "conf", "common", "nic", "stack",
            "sock", "posix", "event", "runtime", "ctl", "filter", "port", "patches", "unit", "system", "fuzz",
            "support", "sem", "arch", "sanitize", "fixtures", "corpus")
EXTS = ("c", "h", "def", "sh", "py", "md", "patch", "conf", "build", "json", "supp", "txt", "png", "csv")
PATH_RE = re.compile(r"(?<![\w/.$~-])((?:%s)/[\w./-]*?[\w-]\.(?:%s))(#[\w-]+)?(?![\w/])"
                     % ("|".join(PREFIXES), "|".join(EXTS)))
# Places a relative path in the tree is read from, besides the file's own
# folder and its parent.
ROOTS = ("", "lstack", "lstack/stack/lwip", "tests", "tests/system", "tests/unit")
LINK_RE = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CODE_RE = re.compile(r"`([^`\n]+)`")


def slug(text):
    """GitHub's anchor of a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        in_code = False
        for line in open(path, encoding="utf-8"):
            if line.startswith("```"):
                in_code = not in_code
            m = None if in_code else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else f"{s}-{n}")
        cache[path] = out
    return cache[path]


def resolve(root, here, rel):
    cands = [os.path.join(here, rel), os.path.join(os.path.dirname(here), rel)]
    cands += [os.path.join(root, r, rel) for r in ROOTS]
    for c in cands:
        if os.path.exists(c):
            return c
    return None


def comments(path, text):
    """The comment text of a source file (C: /* */ and //; others: # lines
    and, in Python, docstrings)."""
    if path.endswith((".c", ".h", ".def")):
        return "\n".join(m.group(0) for m in re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.S))
    if path.endswith(".py"):
        try:
            toks = tokenize.generate_tokens(io.StringIO(text).readline)
            out = [tok.string for tok in toks if tok.type == tokenize.COMMENT]
            tree = ast.parse(text)
        except (SyntaxError, tokenize.TokenError):
            return ""
        nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
        out += [ast.get_docstring(n) or "" for n in nodes]
        return "\n".join(out)
    return "\n".join(ln.split("#", 1)[1] for ln in text.splitlines() if "#" in ln)


def check_docs(root, findings):
    docs = [os.path.join(root, "README.md")]
    ddir = os.path.join(root, "docs")
    docs += sorted(os.path.join(ddir, f) for f in os.listdir(ddir) if f.endswith(".md")) if os.path.isdir(ddir) else []
    for doc in docs:
        if not os.path.exists(doc):
            continue
        here = os.path.dirname(doc)
        text = open(doc, encoding="utf-8").read()
        body = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        for n, line in enumerate(body.splitlines(), 1):
            for m in LINK_RE.finditer(line):
                target = m.group(1)
                if re.match(r"^[a-z]+:", target):
                    continue
                path, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(here, path)) if path else doc
                rel = os.path.relpath(doc, root)
                if not os.path.exists(dest):
                    findings.append(f"{rel}: link to {target}: no such file")
                elif frag and dest.endswith(".md") and frag not in anchors(dest):
                    findings.append(f"{rel}: link to {target}: no heading #{frag} in {os.path.relpath(dest, root)}")
            for m in CODE_RE.finditer(line):
                for p in PATH_RE.finditer(m.group(1)):
                    if resolve(root, here, p.group(1)) is None and not p.group(1).startswith("bench/results/"):
                        findings.append(f"{os.path.relpath(doc, root)}: names {p.group(1)}: no such file")


def source_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", *SRC_DIRS], capture_output=True, text=True,
                             check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
        for d in SRC_DIRS:
            for dp, _, fs in os.walk(os.path.join(root, d)):
                out += [os.path.relpath(os.path.join(dp, f), root) for f in fs]
    return [f for f in out if f.endswith(SRC_EXT) or os.path.basename(f) == "meson.build"]


def check_sources(root, findings):
    for rel in source_files(root):
        path = os.path.join(root, rel)
        if "/patches/" in rel or not os.path.exists(path):
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except UnicodeDecodeError:
            continue
        here = os.path.dirname(path)
        for m in PATH_RE.finditer(comments(rel, text)):
            name, frag = m.group(1), (m.group(2) or "")[1:]
            dest = resolve(root, here, name)
            if dest is None:
                if not name.startswith("bench/results/"):
                    findings.append(f"{rel}: names {name}: no such file")
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                findings.append(f"{rel}: names {name}#{frag}: no such heading")


def run(root):
    findings = []
    check_docs(root, findings)
    check_sources(root, findings)
    return findings


def self_test():
    """The checker must see a planted bad link, a bad anchor and a bad path."""
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "docs"))
        os.makedirs(os.path.join(t, "lstack", "nic"))
        open(os.path.join(t, "README.md"), "w").write(
            "# Top\n[ok](docs/a.md#one) [bad](docs/gone.md) [badanchor](docs/a.md#two)\n")
        open(os.path.join(t, "docs", "a.md"), "w").write("# One\n[self](#one)\n")
        open(os.path.join(t, "lstack", "nic", "x.c"), "w").write(
            "/* see nic/x.c and stack/pcb_front.c, docs/a.md#one, docs/a.md#nope */\nint x;\n")
        got = run(t)
    want = ["README.md: link to docs/gone.md: no such file",
            "README.md: link to docs/a.md#two: no heading #two in docs/a.md",
            "lstack/nic/x.c: names stack/pcb_front.c: no such file",
            "lstack/nic/x.c: names docs/a.md#nope: no such heading"]
    return sorted(got) == sorted(want), got


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else ".")
    print("1..2")
    ok, got = self_test()
    print(("ok" if ok else "not ok") + " 1 - the checker reports planted bad links and paths")
    if not ok:
        print("# it reported: " + "; ".join(got))
    findings = run(root)
    for f in findings:
        print("# " + f)
    print(("ok" if not findings else "not ok") + f" 2 - links and paths of the tree ({len(findings)} broken)")
    return 0 if ok and not findings else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
