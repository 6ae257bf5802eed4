#!/usr/bin/env python3
"""Keeps the README's examples identical to the code the tests compile and run.

Every block between `// README-BEGIN name` and `// README-END` in
Tests/ChatSyncTests/ReadmeExampleTests.swift belongs in README.md as the fenced
Swift block that follows a `<!-- example: name -->` line (the tour's block may
start with import lines of its own). Without arguments: fail when any differs.
With --write: rewrite the README's blocks from the tests.
"""
import pathlib
import re
import sys
import textwrap

root = pathlib.Path(__file__).resolve().parent.parent
source = (root / "Tests/ChatSyncTests/ReadmeExampleTests.swift").read_text()
readme_path = root / "README.md"
readme = readme_path.read_text()
blocks = {name: textwrap.dedent(body).strip("\n")
          for name, body in re.findall(r"// README-BEGIN (\w+)\n(.*?)\n\s*// README-END", source, re.S)}
if not blocks:
    sys.exit("check-readme: no README blocks found in ReadmeExampleTests.swift")

pattern = re.compile(r"(<!-- example: (\w+) -->\n```swift\n)((?:import [^\n]*\n)*\n?)((?:(?!```).)*?)(\n?```)", re.S)
found = set()
failed = False

def replace(match):
    global failed
    head, name, imports, body, tail = match.groups()
    found.add(name)
    if name not in blocks:
        print(f"check-readme: README.md names an example '{name}' that the tests do not have")
        failed = True
        return match.group(0)
    if body != blocks[name]:
        if "--write" not in sys.argv:
            print(f"check-readme: the README's '{name}' example differs from ReadmeExampleTests.swift")
            failed = True
        return head + imports + blocks[name] + tail
    return match.group(0)

updated = pattern.sub(replace, readme)
for name in blocks.keys() - found:
    print(f"check-readme: the '{name}' example is missing from README.md (add <!-- example: {name} -->)")
    failed = True
if "--write" in sys.argv:
    readme_path.write_text(updated)
    failed = bool(blocks.keys() - found)
sys.exit(1 if failed else 0)
