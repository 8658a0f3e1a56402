"""``benchmarks/neural_speed.py``: a tiny run prints its provenance and figures; bad options are one line and
exit 2."""

from __future__ import annotations

import pytest

from benchmarks import neural_speed


def test_a_tiny_run_prints_the_command_the_versions_and_the_rates(capsys):
    assert neural_speed.main(["--tiny", "--seed", "7"]) == 0
    printed = capsys.readouterr().out
    for line in ("command: python benchmarks/neural_speed.py --tiny --seed 7", "seed: 7", "versions:", "machine:",
                 "valued positions per CPU second", "hands per CPU second", "load after"):
        assert line in printed
    assert "4 hands" in printed


@pytest.mark.parametrize("argv, says", [(["--hands", "0"], "--hands: 0 is not allowed"), (["--batch", "-1"], "--batch: -1 is not allowed"),
                                        (["--seed", "-3"], "--seed -3"), (["--model", "missing.json"], "missing.json"),
                                        (["--stock-size", "0"], "stock_size")])
def test_bad_options_are_one_line_and_exit_2(capsys, argv, says):
    with pytest.raises(SystemExit) as stopped:
        neural_speed.main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert says in err.strip().splitlines()[-1] and "Traceback" not in err
