"""The quickstart notebook runs from top to bottom (with a budget of seconds), so it never goes stale."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "quickstart.ipynb"


def test_the_quickstart_notebook_runs_with_a_small_budget(tmp_path, monkeypatch):
    monkeypatch.setenv("SKIPBO_NOTEBOOK_STEPS", "512")
    monkeypatch.setenv("SKIPBO_NOTEBOOK_TEACHER_GAMES", "2")
    monkeypatch.setenv("SKIPBO_NOTEBOOK_EVAL_GAMES", "4")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = "".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                      for output in cell.get("outputs", []))
    assert "trained for" in outputs and "vs planner" in outputs
    assert list((tmp_path / "runs").glob("notebook-*/model.zip"))


def test_the_notebook_is_stored_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")
