"""check_names.py - the property test's checker (emit_names.c writes the
files): every export written with hostile names is read back by what reads
it -- bash -n for the launch script, Python's ast for the Python modules,
tomllib for the torchtitan config, json for JSON, html.parser for the page
-- and must have the structure of the same export with benign names:

  launch script   the same lines once its comment lines are dropped
  Python          the same syntax tree once docstrings are dropped
  TOML            the same keys and values but for the two that carry the
                  model's name, which hold it exactly (valid UTF-8 names)
  JSON            valid UTF-8 and JSON, the same keys
  HTML            the same sequence of tags (no tag from a name)
  Megatron args   the same text once the names are taken out (they carry
                  none)

Files <plan>.<export>.100000.* (hostile op names) must only parse.
Usage: check_names.py DIR; prints "N passed, N failed".
"""
import ast
import html.parser
import json
import os
import subprocess
import sys
import tomllib

d = sys.argv[1]
names = json.load(open(os.path.join(d, "names.json")))
passed = failed = 0


def fail(path, why):
    global failed
    failed += 1
    print(f"FAIL {os.path.basename(path)}: {why}")


def strip_docstrings(tree):
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body[0].value.value = ""
    return ast.dump(tree)


class Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_endtag(self, tag):
        self.tags.append("/" + tag)


def shape(path, text):
    """What must not change with the names; raises if it does not parse."""
    ext = path.rsplit(".", 1)[1]
    if ext == "sh":
        r = subprocess.run(["bash", "-n", path], capture_output=True)
        if r.returncode:
            raise ValueError("bash -n: " + r.stderr.decode(errors="replace"))
        return [ln for ln in text.split("\n") if not ln.lstrip().startswith("#")]
    if ext == "py":
        return strip_docstrings(ast.parse(text))
    if ext == "toml":
        t = tomllib.loads(text)
        t.get("job", {}).pop("description", None)
        t.get("model", {}).pop("hf_assets_path", None)
        return t
    if ext == "json":
        def keys(v):
            if isinstance(v, dict):
                return {k: keys(x) for k, x in v.items() if k not in ("name", "args")}
            if isinstance(v, list):
                return [keys(x) for x in v]
            return None
        return keys(json.loads(text))
    if ext == "html":
        p = Tags()
        p.feed(text)
        p.close()
        return p.tags
    return text


def main():
    global passed
    files = sorted(f for f in os.listdir(d) if f != "names.json")
    benign = {}
    for f in files:
        plan, export, i, ext = f.split(".")
        if i == "0":
            path = os.path.join(d, f)
            benign[plan, export] = shape(path, open(path, encoding="utf-8").read())
    for f in files:
        plan, export, i, ext = f.split(".")
        if i == "0":
            continue
        path = os.path.join(d, f)
        try:
            text = open(path, "rb").read().decode("utf-8")  # strict
            got = shape(path, text)
        except Exception as e:  # noqa: BLE001 - any failure to read is one
            fail(path, f"does not parse: {e}")
            continue
        if i == "100000":
            passed += 1
            continue
        if got != benign[plan, export]:
            fail(path, "its structure differs from the benign export's")
            continue
        raw = bytes(names[f"{plan}.{i}"])
        if ext == "toml" and _valid(raw):
            t = tomllib.loads(text)
            want = raw.decode("utf-8")
            if not t["job"]["description"].startswith("strata plan: " + want + ", tp"):
                fail(path, "the description does not hold the model's name")
                continue
        passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


def _valid(raw):
    try:
        raw.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


sys.exit(main())
