"""Draws Benchmarks/history.png from Benchmarks/results.md: for every scenario that has a
ratio to raw SQLite (or to its own unlimited run), that ratio over the recorded full runs.
Run through scripts/plot-bench-history.sh, which provides matplotlib."""
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

root = Path(__file__).resolve().parent.parent
results = root / "Benchmarks" / "results.md"
output = root / "Benchmarks" / "history.png"

runs = []  # (label, {scenario number: ratio})
names = {}  # scenario number: its description in the latest run, shortened
for line in results.read_text(encoding="utf-8").splitlines():
    heading = re.match(r"## (\d{4}-\d{2}-\d{2}), commit (\w+)", line)
    if heading:
        runs.append((f"{heading.group(1)}\n{heading.group(2)}", {}))
        continue
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    if not runs or len(cells) < 6 or not re.match(r"\d+[a-z]?\.", cells[0]):
        continue
    ratio = re.match(r"([\d.]+)×", cells[3])
    if ratio:
        number = cells[0].split(".")[0]
        runs[-1][1][number] = float(ratio.group(1))
        names[number] = cells[0].split(", ")[0].split("(")[0][:48].strip()

if not runs:
    sys.exit(f"no runs in {results}")
scenarios = sorted(names, key=lambda number: (int(re.match(r"\d+", number).group()), number))
figure, axes = plt.subplots(figsize=(9, 4.5), dpi=110)
for name in scenarios:
    points = [(index, ratios[name]) for index, (_, ratios) in enumerate(runs) if name in ratios]
    axes.plot([x for x, _ in points], [y for _, y in points], marker="o", label=names[name])
axes.axhline(1.0, color="grey", linewidth=0.8)
axes.set_xticks(range(len(runs)), [label for label, _ in runs], fontsize=8)
axes.set_ylabel("time ÷ limit (raw SQLite, or unlimited for 7)")
axes.set_title("ChatSync benchmark ratios over the recorded full runs (lower is better)")
axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
figure.tight_layout()
figure.savefig(output)
print(f"wrote {output.relative_to(root)} ({len(runs)} runs, {len(scenarios)} scenarios)")
