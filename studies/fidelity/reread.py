"""Judge an earlier open-loop session again, with this version's models (no testbed needed):
``studies.fidelity.judge.judge_open`` over the runs in a ``results/<utc>-fidelity-open`` folder,
with the testbed state its runs recorded; writes ``fidelity_open.reread.csv`` beside them.

    .venv/bin/python -m studies.fidelity.reread results/<utc>-fidelity-open [--lead-s 60]
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.results.collect import find
from studies.fidelity.common import parser
from studies.fidelity.judge import judge_open


def reread(where: Path, apps_arg: str, lead_s: float) -> int:
    """``judge_open`` on an earlier ``open_loop`` folder, with the testbed state its runs recorded."""
    from harness.spec.testbed_state import TestbedState
    from harness.spec.loader import load_model

    apps = [a for a in apps_arg.split(",") if (where / a).is_dir()]
    if not apps or not (where / "cores.json").exists():
        print(f"studies.fidelity.reread: error: {where}: not a studies.fidelity.open_loop output (app folders and cores.json expected)",
              file=sys.stderr)
        return 2
    anchor_run = find([where / apps[0] / "anchor"]).runs[0]
    return judge_open(where, apps, load_model(TestbedState, anchor_run.path / "inputs" / "testbed.yaml"),
                      csv_name="fidelity_open.reread.csv", lead_s=lead_s)


def main() -> int:
    ap = parser(__doc__)
    ap.add_argument("open_dir", type=Path, metavar="OPEN_DIR", help="an earlier studies.fidelity.open_loop folder")
    ap.add_argument("--lead-s", type=float, default=60.0, help="the seconds of each run whose measured load the "
                    "forecast (replay_ahead_ms) uses, judged on the requests after them")
    args = ap.parse_args()
    return reread(args.open_dir, args.apps, args.lead_s)


if __name__ == "__main__":
    sys.exit(main())
