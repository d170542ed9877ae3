#!/usr/bin/env python3
"""Dependency circles between sibling modules of a crate (`scripts/module-circles.py [SRC]`; without SRC,
each crate of the workspace: `src` and `crates/*/src`): every `crate::`, `super::` and `self::` path in
non-test code is an edge between files, lifted to the children of their closest common module; a strongly
connected group of siblings is a circle. Prints 0 when none. Crates cannot form circles: Cargo refuses."""
import os, re, subprocess, sys
if len(sys.argv) == 1:
    roots = ['src'] + sorted(os.path.join('crates', c, 'src') for c in os.listdir('crates'))
    for r in roots:
        print(f"{r}: ", end='', flush=True)
        subprocess.run([sys.executable, __file__, r], check=True)
    sys.exit(0)
root = sys.argv[1]
crate = sys.argv[2] if len(sys.argv) > 2 else 'crate'
mods = {}
for dp, dn, fn in os.walk(root):
    for f in fn:
        if not f.endswith('.rs'): continue
        p = os.path.join(dp, f); rel = os.path.relpath(p, root)[:-3].split(os.sep)
        if rel[-1] in ('mod', 'lib', 'main'): rel = rel[:-1]
        if any(x.endswith('tests') or x in ('tests', 'fuzz', 'sample_harness', 'fixture', 'scripted') for x in rel): continue
        mods[tuple(rel)] = p
def strip_tests(s):
    i = s.find('#[cfg(test)]\nmod tests')
    return s if i < 0 else s[:i]
def resolve(path):
    # longest module prefix
    for k in range(len(path), -1, -1):
        if tuple(path[:k]) in mods: return tuple(path[:k])
    return ()
edges = set()
for m, p in mods.items():
    s = strip_tests(open(p).read())
    s = re.sub(r'//[^\n]*', '', s)
    # expand `use crate::a::{b, c::d}` roughly: take the path up to the first brace
    for mt in re.finditer(r'\b(crate|super(?:::super)*|self)::((?:\w+::)*\w+)(::\{([^;]*?)\})?', s):
        head, tail = mt.group(1), mt.group(2).split('::')
        is_mod_file = os.path.basename(p) == 'mod.rs' or p.endswith('lib.rs')
        if head == 'crate': base = []
        elif head == 'self': base = list(m)
        else:
            ups = head.count('super')
            here = list(m) if is_mod_file else list(m)
            base = here[:len(here) - ups]
        targets = [base + tail]
        if mt.group(4):
            for inner in re.split(r',', re.sub(r'\{[^}]*\}', '', mt.group(4))):
                inner = inner.strip().split(' as ')[0]
                if inner and inner != 'self': targets.append(base + tail + inner.split('::'))
        for t in targets:
            r = resolve(t)
            if r != m: edges.add((m, r))
# lift to siblings
sib = set()
for a, b in edges:
    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]: k += 1
    if k >= len(a) or k >= len(b): continue  # ancestor/descendant
    sib.add((a[:k+1], b[:k+1]))
# SCCs
nodes = {x for e in sib for x in e}
adj = {n: [] for n in nodes}
for a, b in sib: adj[a].append(b)
idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in adj[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: out.append(comp)
for n in sorted(nodes):
    if n not in idx: sc(n)
pairs = sorted((a, b) for a, b in sib if (b, a) in sib and a < b)
print(f"circles (strongly connected groups of sibling modules): {len(out)}")
for comp in out:
    names = sorted('::'.join(x) for x in comp)
    print('  ', ' <-> '.join(names))
    # show edges inside
    for a, b in sorted(sib):
        if a in comp and b in comp:
            via = sorted('::'.join(x)+' -> '+'::'.join(y) for x, y in edges if x[:len(a)] == a and y[:len(b)] == b)
            print('      ', '::'.join(a), '->', '::'.join(b), ' via', '; '.join(via[:4]))
