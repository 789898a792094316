"""Equalized distribution page (paper section 4.3): no protected attribute at decision time.

A logistic regression is trained for each alpha (the weight on accuracy; the rest goes to making
the groups' score distributions alike). The sweep is computed once (cached); the slider then
only picks a precomputed point, so moving it redraws at once.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, keys, source_view, ui
from luskin_app.cache import background_run, is_asked, options_key, remember, shared
from luskin_app.help import HELP
from luskin_app.option_inputs import OptionInputs
from luskin_core.corrections import equalize, models
from luskin_core.corrections.equalize import AlphaSweep
from luskin_core.counting.data import PRESETS
from luskin_core.formatting import format_percent, format_points
from luskin_core.present import plots
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.options import OPTION_CONSTRAINTS

ALPHA_CHOICES = tuple(float(a) for a in equalize.DEFAULT_ALPHAS)


def _sweep(spec_json: str, frame: pd.DataFrame, alphas: tuple[float, ...], features: tuple[str, ...] | None,
           paper_compas: bool, options: dict[str, Any], progress: Any = None) -> AlphaSweep:
    """Train one classifier per alpha (the paper's COMPAS encoding for the COMPAS sample); ``options``: the
    tool's other declared options on the page (the seed, ...), the estimator's keywords."""
    spec = AuditSpec.from_json(spec_json)
    seed = options.get("seed", equalize.EqualizeOptions.seed)
    preprocess = models.compas_paper_pipeline("LR", random_state=seed)[:-1] if paper_compas else None
    return equalize.equalize_frame(frame, spec, alphas=alphas, features=list(features) if features else None,
                                   preprocess=preprocess, progress=progress, **options)


def _features(spec: AuditSpec) -> tuple[str, ...] | None:
    """The preset's model columns without the outcome and the protected column (not known at decision time)."""
    features = ch_.choices().get("features")
    if not features:
        return None
    banned = {spec.outcome.lower(), spec.protected.column.lower() if spec.protected else ""}
    return tuple(c for c in features if c.lower() not in banned)


def render_options() -> dict[str, Any]:
    """Which alphas to train, and the tool's other declared options (the seed of the split, ...)."""
    ch = ch_.choices()
    opts = dict(ch["equalize"])
    form = OptionInputs("equalize", opts)
    ch_.seed("eq_alphas", [a for a in opts.get("alphas") or ALPHA_CHOICES if a in ALPHA_CHOICES])
    left, right = st.columns([3, 1])
    alphas = left.multiselect("Alphas to train (one model each)", ALPHA_CHOICES, key="eq_alphas",
                              help=HELP["alpha"] + " Fewer alphas compute faster.")
    form.drawn("alphas")  # a list among the offered alphas
    with right:
        form.show("seed")
        form.rest()  # any other option the tool declares
    opts["alphas"] = sorted(float(a) for a in alphas)
    ch["equalize"] = opts
    if opts["alphas"] and form.checked("equalized") is None:  # the command line's checks of the same values
        st.stop()
    return opts


@shared(show_spinner=False, max_entries=512)
def _figures(store_key: str, alpha: float, group: str, other: str, _sweep: AlphaSweep) -> tuple[Any, Any, Any]:
    """The three charts for one alpha, built once (a slider step then only sends them).

    Kept as plain dicts: each session gets its own copy (see ``shared``), and a dict copies in
    well under a millisecond where a plotly figure takes about 50 ms.
    """
    points = _sweep.points
    alphas = list(_sweep.alphas)
    histograms = plots.sweep_histograms(_sweep, alpha, group, other)
    # fixed axes while the slider moves: the tallest bar of every alpha sets the histograms' scale
    histograms.update_yaxes(range=[0, _tallest_bar(_sweep) * 1.05], autorange=False)
    accuracy = plots.alpha_accuracy(alphas, [p.accuracy for p in points], alpha)  # axes fixed: from 0, every alpha
    gaps = plots.alpha_gaps(alphas, [p.tpr_gap for p in points], [p.fpr_gap for p in points], alpha)
    return (ui.fit_chart(histograms).to_dict(), ui.fit_chart(accuracy, 340).to_dict(),
            ui.fit_chart(gaps, 340).to_dict())


def _tallest_bar(sweep: AlphaSweep) -> float:
    """The largest share in any bin of any group's score histogram, over every alpha of the sweep."""
    tallest = 0.0
    for point in sweep.points:
        for by_label in point.histograms.values():
            for key in ("positive", "negative"):
                counts = [float(c) for c in by_label[key]]
                total = sum(counts)
                if total:
                    tallest = max(tallest, max(counts) / total)
    return tallest or 1.0


@st.fragment
def render_sweep(sweep: AlphaSweep, spec: AuditSpec, store_key: str) -> None:
    """The alpha slider, the groups' score histograms and the accuracy / gap curves.

    A fragment: moving the slider reruns only this part of the page, with cached charts.
    """
    ch = ch_.choices()
    alphas = list(sweep.alphas)
    remembered = ch["equalize"].get("alpha")
    ch_.seed("eq_alpha", remembered if remembered in alphas else alphas[-1])
    if st.session_state[keys.EQ_ALPHA] not in alphas:
        st.session_state[keys.EQ_ALPHA] = alphas[-1]
    alpha = st.select_slider("alpha (weight on accuracy)", options=alphas, key="eq_alpha",
                             help=HELP["alpha"] + " Move it left and watch the two groups' shapes converge.")
    ch["equalize"]["alpha"] = alpha
    point = sweep.point(alpha)
    ui.show_warnings(sweep.correction)  # every alpha's warnings, once each
    a, b, c = st.columns(3)
    a.metric("Accuracy (test rows)", format_percent(point.accuracy))
    b.metric("TPR gap", f"{format_points(point.tpr_gap)} points", help=HELP["tpr"])
    c.metric("FPR gap", f"{format_points(point.fpr_gap)} points", help=HELP["fpr"])
    group, other = sweep.classes   # as the data names them ('Female' and 'Male'), the protected group first
    histograms, accuracy, gaps = _figures(store_key, alpha, group, other, sweep)
    ui.chart(histograms, key="eq_hist", fit=False)
    left, right = st.columns(2)
    points = sweep.points
    with left:
        ui.chart(accuracy, key="eq_accuracy", fit=False)
    with right:
        ui.chart(gaps, key="eq_gaps", fit=False)
    table = pd.DataFrame([{"alpha": p.alpha, "Accuracy (%)": 100 * p.accuracy, "TPR gap (points)": 100 * p.tpr_gap,
                           "FPR gap (points)": 100 * p.fpr_gap} for p in points])
    with st.expander("The sweep as a table"):
        ui.grid(table, hide_index=True, key="eq_table", column_config={
            c: st.column_config.NumberColumn(format="%.1f") for c in table.columns if c != "alpha"})
    st.caption(f"Trained on {sweep.n_train:,} rows, measured on {sweep.n_test:,} held-out rows. "
               "The protected column is not a model input: the groups are only used while training.")


def render_run(spec: AuditSpec, options: dict[str, Any]) -> None:
    """The Train button (absent when the sweep is kept or under way), the progress bar and the sweep."""
    data = dataset.dataset()
    features = _features(spec)
    paper_compas = data.sample == "compas" and ch_.choices().get("features") == list(PRESETS["compas"].features)
    declared = {name: options[name] for name in OPTION_CONSTRAINTS["equalize"] if name in options and name != "alphas"}
    key = options_key({"alphas": options["alphas"], **declared, "features": features, "paper_compas": paper_compas})
    store_key = f"{data.fingerprint}|{spec.to_json()}|{key}"
    asked = is_asked("equalized", store_key)
    if not (asked or st.button("Train the models", key="eq_run", type="primary")):
        st.info(f"Press **Train the models** to train {len(options['alphas'])} models, one per alpha. "
                "Results are kept, so the slider then answers at once.", icon=ui.ICONS["info"])
        return
    bar = st.empty()

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)

    rows = source_view.model_rows(spec)
    sweep = ui.guarded(background_run, "equalized", store_key, lambda report: _sweep(   # a rerun does not lose it
        spec.to_json(), rows, tuple(options["alphas"]), features, paper_compas, declared, report), progress,
        where="equalized")
    if sweep is not None:  # draw every alpha's charts now, so each slider step only sends them
        with st.spinner("Drawing the charts…"):
            group, other = sweep.classes
            for alpha in sweep.alphas:
                _figures(store_key, alpha, group, other, sweep)
    bar.empty()
    if sweep is not None:
        remember("equalized", spec, sweep)
        render_sweep(sweep, spec, store_key)


st.title("Equalized distribution: fair scores without using the group")
st.markdown("When the group may not be used at decision time, the model itself is trained to give "
            "both groups the same distribution of scores. **alpha** sets the balance: 1 means accuracy "
            "only; smaller values weigh equal distributions more.")
spec_ = ui.require_spec("equalized")
options_ = render_options()
if not options_["alphas"]:
    st.warning("Choose at least one alpha to train (above).", icon=ui.ICONS["error"])
    st.stop()
ui.require_model_inputs(spec_, "equalized", leave_out=[spec_.protected.column] if spec_.protected else [])
render_run(spec_, options_)
