#!/usr/bin/env python3
"""Fails when a README code block taken from the tests has drifted from them.

Every block between `// README-BEGIN name` and `// README-END` in
Tests/ChatSyncTests/ReadmeExampleTests.swift must appear in README.md, dedented,
line for line. The tests compile and run those blocks, so the README's code does too.
"""
import pathlib
import re
import sys
import textwrap

root = pathlib.Path(__file__).resolve().parent.parent
source = (root / "Tests/ChatSyncTests/ReadmeExampleTests.swift").read_text()
readme = (root / "README.md").read_text()
blocks = re.findall(r"// README-BEGIN (\w+)\n(.*?)\n\s*// README-END", source, re.S)
if not blocks:
    sys.exit("check-readme: no README blocks found in ReadmeExampleTests.swift")
failed = False
for name, body in blocks:
    text = textwrap.dedent(body).strip("\n")
    if text not in readme:
        print(f"check-readme: the '{name}' block of ReadmeExampleTests.swift is not in README.md verbatim:\n{text}\n")
        failed = True
sys.exit(1 if failed else 0)
