#!/usr/bin/env python3
"""Lines of code per crate and top-level module, as a reader meets them (`scripts/count-lines.py [SRC...]`;
without SRC, every crate of the workspace): blank lines, `//` comments and test code (`#[cfg(test)]` items and
the files they declare) are left out."""
import os, re, sys


def code_lines(text):
    """The lines of `text` that are neither blank, nor a comment, nor inside a `#[cfg(test)]` item."""
    lines, out, i = text.split('\n'), [], 0
    while i < len(lines):
        if lines[i].strip().startswith('#[cfg(test)]'):
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith('#['):
                j += 1
            if j < len(lines) and re.match(r'\s*(pub(\([^)]*\))? )?mod \w+\s*;', lines[j]):
                i = j + 1
                continue
            depth, opened = 0, False
            while j < len(lines):
                depth += lines[j].count('{') - lines[j].count('}')
                opened = opened or '{' in lines[j]
                j += 1
                if (opened and depth <= 0) or (not opened and lines[j - 1].strip().endswith(';')):
                    break
            i = j
            continue
        out.append(lines[i].strip())
        i += 1
    return [l for l in out if l and not l.startswith('//')]


def test_modules(root):
    """(folder, name) of every module declared under `#[cfg(test)]`: its file is test code."""
    found = set()
    for dp, _, files in os.walk(root):
        for f in files:
            if f.endswith('.rs'):
                text = open(os.path.join(dp, f)).read()
                base = dp if f in ('mod.rs', 'lib.rs', 'main.rs') else os.path.join(dp, f[:-3])
                for m in re.finditer(r'#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))? )?mod (\w+)\s*;', text):
                    found.add((base, m.group(1)))
    return found


def count(root):
    tests, per = test_modules(root), {}
    for dp, _, files in os.walk(root):
        d, under_test = dp, False
        while d.startswith(root) and d != root:
            under_test |= (os.path.dirname(d), os.path.basename(d)) in tests
            d = os.path.dirname(d)
        for f in files:
            if not f.endswith('.rs') or under_test or (dp, f[:-3]) in tests:
                continue
            top = os.path.relpath(os.path.join(dp, f), root).split(os.sep)[0]
            per[top] = per.get(top, 0) + len(code_lines(open(os.path.join(dp, f)).read()))
    return per


roots = sys.argv[1:] or ['src'] + sorted(os.path.join('crates', c, 'src') for c in os.listdir('crates'))
for root in roots:
    per = count(root)
    print(f"{sum(per.values()):7,d}  {root}  ({', '.join(f'{k} {v:,}' for k, v in sorted(per.items(), key=lambda x: -x[1]))})")
