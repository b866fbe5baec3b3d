#!/usr/bin/env python3
"""Counts what issue 51 asked to see before and after, on a checkout's Sources/:
functions (func, init, computed bodies of `func`) over 60 and 80 lines, JSON encoder and
decoder set-ups, `[String: Any]` uses, `CodingKeys` enums, and each target's lines.

    house_metrics.py [CHECKOUT] [--list]    (default: this checkout; --list names the long functions)

A function's length runs from its `func`/`init` line to the brace that closes it, braces in
string literals and comments left out; it is a reading aid, not a parser."""
import os
import re
import sys

DECL = re.compile(r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|static|class|final|override|mutating|nonisolated|required|convenience|@discardableResult)\s+)*(func\s+[^\s(<]+|init[?!]?\s*[(<])')


def strip(line):
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    return line.split('//', 1)[0]


def functions(path):
    lines = open(path, errors='replace').read().split('\n')
    out = []
    for i, line in enumerate(lines):
        m = DECL.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            code = strip(lines[j])
            depth += code.count('{') - code.count('}')
            opened = opened or '{' in code
            if opened and depth <= 0:
                out.append((j - i + 1, i + 1, m.group(1).split('(')[0].strip()))
                break
            if not opened and j > i + 12:
                break  # a protocol requirement: no body
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), '..'))
    sources = os.path.join(root, 'Sources')
    long_functions, targets = [], {}
    counts = {'JSONEncoder()': 0, 'JSONDecoder()': 0, '[String: Any]': 0, 'enum CodingKeys': 0,
              'JSONSerialization': 0, 'convertFromSnakeCase': 0, 'convertToSnakeCase': 0}
    for target in sorted(os.listdir(sources)):
        total = 0
        for folder, _, names in os.walk(os.path.join(sources, target)):
            for name in names:
                path = os.path.join(folder, name)
                if not name.endswith(('.swift', '.c', '.h')):
                    continue
                text = open(path, errors='replace').read()
                total += text.count('\n')
                if not name.endswith('.swift'):
                    continue
                for key in counts:
                    counts[key] += text.count(key)
                for length, line, fname in functions(path):
                    if length > 60:
                        long_functions.append((length, os.path.relpath(path, root), line, fname))
        targets[target] = total
    over60 = len(long_functions)
    over80 = sum(1 for f in long_functions if f[0] > 80)
    print(f'functions over 60 lines: {over60}, over 80: {over80}')
    for key, n in counts.items():
        print(f'{key}: {n}')
    print('lines per target: ' + ', '.join(f'{t} {n}' for t, n in sorted(targets.items(), key=lambda x: -x[1])))
    if '--list' in sys.argv:
        for length, path, line, fname in sorted(long_functions, reverse=True):
            print(f'  {length:4d}  {path}:{line}  {fname}')


if __name__ == '__main__':
    main()
