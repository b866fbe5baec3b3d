#!/usr/bin/env python3
"""Lints poseact's web pages: the page templates in Sources/*/Resources (HTML, CSS,
JavaScript) and the pages made from them. Standard library and node only. Used by the
page tests (EvaluationTests, LiveViewTests); prints one line per fault, exits 1 on any.

    lint_page.py FILE...

  .html  every element closed, in order (no optional end tags, no stray end tags); each
         inline script passes `node --check`, each JSON script parses (unless it is a
         template's `{{placeholder}}`); no placeholder is left in a page that is not a template;
  .js    `node --check`, and no "</script" (the script is inlined in its page);
  .css   braces balanced, and no "</style" (the style is inlined in its page).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
PLACEHOLDER = re.compile(r"\{\{[a-z_]+\}\}")


def node_check(source, name, faults):
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as f:
        f.write(source)
    try:
        run = subprocess.run(["node", "--check", f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if run.returncode != 0:
        why = [line for line in run.stderr.splitlines() if "Error" in line]
        faults.append(f"{name}: JavaScript does not parse: {(why or [run.stderr.strip()])[0]}")


class Page(HTMLParser):
    def __init__(self, name, template, faults):
        super().__init__(convert_charrefs=True)
        self.name, self.template, self.faults = name, template, faults
        self.open = []          # (tag, line)
        self.script_type = None
        self.script = []

    def where(self):
        return f"{self.name}:{self.getpos()[0]}"

    def handle_starttag(self, tag, attrs):
        names = [a for a, _ in attrs]
        if len(names) != len(set(names)):
            self.faults.append(f"{self.where()}: <{tag}> repeats an attribute")
        if tag in VOID:
            return
        self.open.append((tag, self.getpos()[0]))
        if tag == "script":
            self.script_type = dict(attrs).get("type") or "text/javascript"
            self.script = []

    def handle_startendtag(self, tag, attrs):
        pass    # <x/>: closed where it opens (SVG)

    def handle_endtag(self, tag):
        if tag in VOID:
            self.faults.append(f"{self.where()}: </{tag}>: {tag} has no end tag")
            return
        if tag not in (t for t, _ in self.open):
            self.faults.append(f"{self.where()}: </{tag}> closes nothing")
            return
        while self.open[-1][0] != tag:
            inner, line = self.open.pop()
            self.faults.append(f"{self.name}:{line}: <{inner}> not closed before </{tag}> on line {self.getpos()[0]}")
        self.open.pop()
        if tag == "script":
            self.check_script("".join(self.script))
            self.script_type = None

    def handle_data(self, data):
        if self.script_type is not None:
            self.script.append(data)
        elif not self.template and PLACEHOLDER.search(data):
            self.faults.append(f"{self.where()}: a placeholder left: {PLACEHOLDER.search(data).group()}")

    def check_script(self, source):
        if self.template and PLACEHOLDER.fullmatch(source.strip()):
            return
        if self.script_type == "application/json":
            try:
                json.loads(source)
            except ValueError as e:
                self.faults.append(f"{self.name}: a JSON script does not parse: {e}")
        else:
            node_check(source, self.name, self.faults)

    def close(self):
        super().close()
        for tag, line in self.open:
            self.faults.append(f"{self.name}:{line}: <{tag}> never closed")


def lint(path, faults):
    text = open(path, encoding="utf-8").read()
    name = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
    template = os.sep + "Resources" + os.sep in os.path.abspath(path)
    if path.endswith(".html"):
        if not text.lstrip().lower().startswith("<!doctype html>"):
            faults.append(f"{name}: no <!doctype html> first")
        page = Page(name, template, faults)
        page.feed(text)
        page.close()
    elif path.endswith(".js"):
        if "</script" in text.lower():
            faults.append(f"{name}: \"</script\" would end the page's script early")
        node_check(text, name, faults)
    elif path.endswith(".css"):
        if "</style" in text.lower():
            faults.append(f"{name}: \"</style\" would end the page's style early")
        depth = 0
        for number, line in enumerate(text.splitlines(), 1):
            depth += line.count("{") - line.count("}")
            if depth < 0:
                faults.append(f"{name}:{number}: a }} without its {{")
                depth = 0
        if depth:
            faults.append(f"{name}: {depth} {{ never closed")
    else:
        faults.append(f"{name}: not .html, .js or .css")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    faults = []
    for path in sys.argv[1:]:
        lint(path, faults)
    for fault in faults:
        print(fault)
    sys.exit(1 if faults else 0)


if __name__ == "__main__":
    main()
