"""The `papertrade` command refuses what it cannot do, with a message, before starting anything."""

import pytest

from papertrade import cli


@pytest.mark.parametrize("count", ["0", "-3", "two", "1.5"])
def test_serve_refuses_a_worker_count_that_is_not_a_positive_number(
    count: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["serve", "--workers", count])
    assert stopped.value.code == 2  # argparse's usage error; nothing was served
    assert "give a whole number of processes, 1 or more" in capsys.readouterr().err
