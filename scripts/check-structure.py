#!/usr/bin/env python3
"""check-structure.py - two rules of the code's shape, checked from the text.

1. No function is longer than 80 lines, from the first line of its header
   to its closing brace.
2. No circle of calls between the files of one module: within each folder
   (MODULES below), a file that calls a function another file defines is
   above it, and nothing calls back up.
3. The modules call downward only: a file calls functions of its own
   folder and of the folders before it in MODULES, the order CMakeLists.txt
   builds them in (rules, then the model of one configuration, then the
   search, the services on it, the plan file, what is written from it).
4. No library folder holds more than a fifth of the library's lines (the
   command, cli/, is not the library).

Functions are found as clang-format lays them out (.clang-format): a
definition's header starts at column 0 and its body closes with a brace at
column 0.  A call is a defined function's name followed by "(" in another
file of the same folder, outside comments and strings.

Usage: scripts/check-structure.py [ROOT]   (default: the checkout)
Prints each breach, then one line "N functions, M files: K breaches";
exits 1 on a breach.
"""
import os
import re
import subprocess
import sys

MODULES = ["core", "traces", "import", "topo", "intraop", "rules", "model", "pipeline",
           "services", "merge", "export", "cli"]
LIMIT = 80
HEADER_START = re.compile(r"^[A-Za-z_]")
NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def strip(text):
    """The text without comments, strings and character constants (each
    replaced by spaces, so line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(lines):
    """(name, first line, last line, static) of each definition: a header
    from column 0 to a line ending in "{" (no ";" between), its body to the
    first "}" at column 0."""
    found, k = [], 0
    while k < len(lines):
        line = lines[k]
        if not HEADER_START.match(line):
            k += 1
            continue
        end = k
        while end < len(lines) and not lines[end].rstrip().endswith(("{", ";")):
            end += 1
        if end >= len(lines):
            break
        header = " ".join(x.strip() for x in lines[k : end + 1])
        first = header.split("(")[0]
        m = NAME.search(first + "(")
        if (not lines[end].rstrip().endswith("{") or "(" not in header or "=" in first
                or not m or first.split()[0] in ("struct", "enum", "union", "typedef")):
            k = end + 1
            continue
        close = end + 1
        while close < len(lines) and not lines[close].startswith("}"):
            close += 1
        found.append((m.group(1), k + 1, close + 1, header.startswith("static")))
        k = close + 1
    return found


def circles(graph):
    """Each cycle of the file graph, once (as a list of files)."""
    seen, stack, on, out = set(), [], set(), []

    def visit(f):
        seen.add(f)
        stack.append(f)
        on.add(f)
        for g in sorted(graph.get(f, ())):
            if g in on:
                cyc = stack[stack.index(g) :]
                key = tuple(sorted(cyc))
                if key not in {tuple(sorted(c)) for c in out}:
                    out.append(cyc)
            elif g not in seen:
                visit(g)
        stack.pop()
        on.discard(f)

    for f in sorted(graph):
        if f not in seen:
            visit(f)
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    os.chdir(root)
    try:
        files = subprocess.check_output(["git", "ls-files", "*.c"], text=True).split()
    except (OSError, subprocess.CalledProcessError):
        print("not a git checkout: skipped")
        return 77
    breaches, nfun = 0, 0
    alldefs = {}
    for f in files:
        mod = f.split("/")[0]
        if mod not in MODULES or f.count("/") != 1:
            continue
        text = strip(open(f, encoding="utf-8", errors="replace").read())
        for name, a, b, static in functions(text.split("\n")):
            if not static:
                alldefs.setdefault(name, mod)
    for f in files:
        mod = f.split("/")[0]
        if mod not in MODULES or f.count("/") != 1:
            continue
        text = strip(open(f, encoding="utf-8", errors="replace").read())
        for name in sorted(set(NAME.findall(text))):
            g = alldefs.get(name)
            if name.startswith("__") or name.isupper():
                continue  # an attribute or a macro, not a function
            if g and MODULES.index(g) > MODULES.index(mod):
                print(f"{f}: calls {name} of {g}/, a module above {mod}/")
                breaches += 1
    lines = {}
    for f in files + subprocess.check_output(["git", "ls-files", "*.h"], text=True).split():
        mod = f.split("/")[0]
        if mod in MODULES and mod != "cli" and f.count("/") == 1:
            lines[mod] = lines.get(mod, 0) + sum(1 for _ in open(f, encoding="utf-8", errors="replace"))
    total = sum(lines.values())
    for mod, n in sorted(lines.items()):
        if 5 * n > total:
            print(f"{mod}/: {n} of the library's {total} lines, more than a fifth")
            breaches += 1
    for mod in MODULES:
        mine = [f for f in files if f.startswith(mod + "/") and f.count("/") == 1]
        defs, texts = {}, {}
        for f in mine:
            text = strip(open(f, encoding="utf-8", errors="replace").read())
            texts[f] = text
            for name, a, b, static in functions(text.split("\n")):
                nfun += 1
                if b - a + 1 > LIMIT:
                    print(f"{f}:{a}: {name} is {b - a + 1} lines (more than {LIMIT})")
                    breaches += 1
                if not static:
                    defs[name] = f
        graph = {}
        for f, text in texts.items():
            for name in set(NAME.findall(text)):
                g = defs.get(name)
                if g and g != f:
                    graph.setdefault(f, set()).add(g)
        for cyc in circles(graph):
            print("circle: " + " -> ".join(cyc + [cyc[0]]))
            breaches += 1
    nfiles = sum(1 for f in files if f.split("/")[0] in MODULES)
    print(f"{nfun} functions, {nfiles} files: {breaches} breaches")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
