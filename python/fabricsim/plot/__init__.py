"""Figures of a run, a sweep or an experiment: what each figure shows (:mod:`.figures`, data
only), drawn to PNG and SVG with matplotlib (:mod:`.static`), or as one self-contained HTML
report with plotly (:mod:`.report`)."""

from .static import draw, plot_dir, save_figures

__all__ = ["draw", "plot_dir", "save_figures"]
