"""Run every benchmark script in bench/ and print their tables."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

if __name__ == "__main__":
    failed = 0
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n## {script.stem}\n", flush=True)
        failed |= subprocess.call([sys.executable, str(script)])
    sys.exit(failed)
