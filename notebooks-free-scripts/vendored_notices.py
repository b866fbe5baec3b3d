#!/usr/bin/env python3
"""The notices of C code that Swift packages carry inside them (llhttp in swift-nio, the
atomics shims…), for a package's licenses/ folder.

    vendored_notices.py CHECKOUTS_DIR OUT_DIR

For each package in CHECKOUTS_DIR: every LICENSE/COPYING/NOTICE file below its Sources/ is
copied as swift-<package>.<folder>.<name>; and the distinct leading comments that carry a
copyright in its C, C++, header and assembly files are written, each once with the files'
count, to swift-<package>.source-notices.txt (vendored code whose licence lives only in its
files' headers)."""
import os
import re
import shutil
import sys

SOURCE = ('.c', '.cc', '.cpp', '.h', '.S', '.inc')
LEADING_COMMENT = re.compile(r'\s*(/\*.*?\*/|(?:[ \t]*//[^\n]*\n)+)', re.S)


def notices(sources):
    blocks = {}
    for folder, _, names in os.walk(sources):
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.startswith(('LICENSE', 'COPYING', 'NOTICE')):
                yield 'file', path
                continue
            if not name.endswith(SOURCE):
                continue
            with open(path, errors='replace') as f:
                match = LEADING_COMMENT.match(f.read(20000))
            if match and 'opyright' in match.group(1):
                blocks[match.group(1).strip()] = blocks.get(match.group(1).strip(), 0) + 1
    for block, count in sorted(blocks.items()):
        yield 'block', (block, count)


def main(checkouts, out):
    for package in sorted(os.listdir(checkouts)):
        sources = os.path.join(checkouts, package, 'Sources')
        if not os.path.isdir(sources):
            continue
        texts = []
        for kind, item in notices(sources):
            if kind == 'file':
                component = os.path.basename(os.path.dirname(item))
                shutil.copyfile(item, os.path.join(out, f'swift-{package}.{component}.{os.path.basename(item)}'))
            else:
                block, count = item
                texts.append(f'--- in {count} file(s) ---\n{block}\n')
        if texts:
            with open(os.path.join(out, f'swift-{package}.source-notices.txt'), 'w') as f:
                f.write(f'The copyright notices at the head of the C sources inside the Swift package {package}, each once.\n\n')
                f.write('\n'.join(texts))


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
