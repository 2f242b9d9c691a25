"""Run every benchmark script in bench/ and print their tables, then the figures with a target
(each script's verdict lines: "Python per order … target", "chain upkeep adds …") again at the
end, so `make bench` ends with them. Each script's heading carries the load average before it: a
figure is a result only where that load was under 1.5 (BENCHMARKS.md)."""

import subprocess
import sys
from pathlib import Path

from server import load_average

HERE = Path(__file__).parent
# Lines a script prints for a figure that has a target (see BENCHMARKS.md).
VERDICTS = ("target", "chain upkeep adds", "Python per order")


if __name__ == "__main__":
    failed = 0
    summary: list[str] = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n## {script.stem} (load average before: {load_average()})\n", flush=True)
        process = subprocess.Popen(
            [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, bufsize=1
        )
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            if any(word in line for word in VERDICTS):
                summary.append(f"{script.stem}: {line.strip()}")
        failed |= process.wait()
    print("\n## Figures with a target\n")
    print("\n".join(summary) or "(none printed)")
    sys.exit(failed)
