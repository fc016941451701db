#!/usr/bin/env python3
"""strata-man.py - write strata(1), the man page, from the program's own
--help texts, which cli/opts.c prints from each command's option table:
an option added to a table is in the next build's man page, with the help
line of its row, and the page cannot say what the program does not.

The commands are those `strata --help` lists; a command's subcommands
are those its help names in `strata CMD SUB --help` or in its usage lines
(`strata trace <gen|info> MODEL`, `strata trace import hf ...`), each
asked for its own help.  In a help text, a line of two spaces and a '-'
is an option row (its help may go on below, indented); other indented
lines (lists, tables) are kept as they are; the rest is prose.

Usage: strata-man.py STRATA_BINARY [OUTPUT]   (standard output without
OUTPUT; nothing is written when a help text cannot be had)
"""
import os
import re
import subprocess
import sys

OPTION = re.compile(r"^ {2,}(-\S.*?)(?: {2,}(\S.*))?$")


# a sanitizer build's program is asked for text, not checked for leaks
ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:" +
           os.environ.get("ASAN_OPTIONS", ""))


def helptext(strata, words):
    r = subprocess.run([strata] + words + ["--help"], capture_output=True,
                       text=True, timeout=60, env=ENV)
    if r.returncode != 0 or not r.stdout.startswith("Usage:"):
        return None
    return r.stdout


def esc(text):
    """Roff text: backslashes and a line's leading dot or quote made
    literal; a '-' that begins a word is a minus sign (an option)."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"(?<![\w-])-", r"\\-", text)
    text = re.sub(r"(?<=\\-)-", r"\\-", text)
    return "\\&" + text if text[:1] in (".", "'") else text


def add_text(out, text):
    """A line of prose: one the help broke after a hyphen ("micro-" and
    "batch") is joined to it, so that roff does not put a space between."""
    if out and re.search(r"[a-z]-$", out[-1]) and not out[-1].startswith("."):
        out[-1] += text
    else:
        out.append(text)


def subcommands(words, text):
    """The subcommands a help text names: 'strata W... --help' and the
    words of its usage lines after `strata WORDS` (<a|b> gives both)."""
    found = []
    flat = " ".join(text.split())
    for m in re.finditer(r"'strata ((?:[a-z][a-z-]* )+)--help'", flat):
        found.append(m.group(1).split())
    for line in text.splitlines():
        m = re.match(r"^(?:Usage:)? +strata (.*)", line)
        if not m:
            continue
        toks, seq = m.group(1).split(), [[]]
        for t in toks:
            alts = re.fullmatch(r"<([a-z|-]+)>", t)
            if alts:
                seq = [s + [a] for s in seq for a in alts.group(1).split("|")]
            elif re.fullmatch(r"[a-z][a-z-]*", t):
                seq = [s + [t] for s in seq]
            else:
                break
        found += seq
    out = []
    for f in found:
        if len(f) > len(words) and f[:len(words)] == words and f not in out:
            out.append(f)
    return out


def render(text):
    """A help text (after its usage lines) as roff."""
    out, mode = [], None  # mode: None, "prose", "option", "verbatim"
    col = 0  # an option's help column: deeper lines go on with its help
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        opt = OPTION.match(line)
        if mode == "option" and line.strip() and indent >= col:
            add_text(out, esc(line.strip()))
        elif not line.strip():
            if mode == "verbatim":
                out.append(".fi")
            mode = None
        elif opt:
            if mode == "verbatim":
                out.append(".fi")
            out += [".TP", "\\fB%s\\fR" % esc(opt.group(1))]
            if opt.group(2):
                out.append(esc(opt.group(2)))
            col = line.find(opt.group(2)) if opt.group(2) else indent + 4
            mode = "option"
        elif line.startswith(" "):
            if mode != "verbatim":
                out += [".PP", ".nf"]
            out.append(esc(line))
            mode = "verbatim"
        else:
            if mode == "verbatim":
                out.append(".fi")
            if mode != "prose":
                out.append(".PP")
                out.append(esc(line))
            else:
                add_text(out, esc(line))
            mode = "prose"
    if mode == "verbatim":
        out.append(".fi")
    return out


def split_usage(text):
    lines = text.splitlines()
    n = 1
    while n < len(lines) and re.match(r"^ +strata ", lines[n]):
        n += 1
    usage = [lines[0][len("Usage: "):]] + [ln.strip() for ln in lines[1:n]]
    return usage, "\n".join(lines[n:])


def page(strata):
    main = helptext(strata, [])
    version = subprocess.run([strata, "--version"], capture_output=True,
                             text=True, env=ENV).stdout.split()[-1]
    if main is None:
        raise SystemExit("strata-man.py: %s --help failed" % strata)
    commands = re.findall(r"^  ([a-z]+) ", main.split("Commands:")[1]
                          .split("\n\n")[0], re.M)
    out = ['.TH STRATA 1 "" "strata %s" "User Commands"' % version,
           ".SH NAME",
           "strata \\- plan how to train a large model on a GPU cluster",
           ".SH SYNOPSIS", ".B strata",
           "\\fICOMMAND\\fR [\\fIoptions\\fR]", ".SH DESCRIPTION"]
    out += render(split_usage(main)[1])
    out.append(".SH COMMANDS")
    seen, queue = set(), [[c] for c in commands]
    while queue:
        words = queue.pop(0)
        text = helptext(strata, words)
        if text is None or text in seen:
            continue
        seen.add(text)
        usage, body = split_usage(text)
        out += ['.SS "strata %s"' % " ".join(words), ".nf"]
        out += ["\\fB%s\\fR" % esc(u) for u in usage]
        out.append(".fi")
        out += render(body)
        queue[:0] = subcommands(words, text)
    out += [".SH FILES", ".TP", "\\fIPREFIX\\fB/share/doc/strata/\\fR",
            "The documentation: the help texts' \\fBdocs/\\fINAME\\fB.md\\fR "
            "is \\fIPREFIX\\fB/share/doc/strata/\\fINAME\\fB.md\\fR "
            "(with README.md beside them), where \\fIPREFIX\\fR is the "
            "folder above the one holding \\fBstrata\\fR.",
            ".SH SEE ALSO",
            "\\fBstrata \\fICOMMAND\\fB \\-\\-help\\fR prints what this "
            "page holds for \\fICOMMAND\\fR."]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__.split("Usage: ")[1])
    text = page(sys.argv[1])
    if len(sys.argv) == 3:
        with open(sys.argv[2], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
