"""Retrain page (paper sections 3.1-3.5): relabel, retrain, and compare the gap before and after."""

from __future__ import annotations

from typing import Any, cast

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, source_view, ui
from luskin_app.cache import Progress, background_run, is_asked, remember, shared
from luskin_app.help import HELP
from luskin_app.option_inputs import OptionInputs
from luskin_core import formatting as cells
from luskin_core.corrections.retrain import RetrainOptions, RetrainResult, model_bytes, retrain
from luskin_core.present import plots
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.options import RETRAIN_KINDS

PAIRS = tuple(f"{a}/{b}" for a in RETRAIN_KINDS for b in RETRAIN_KINDS)  # LR/LR, LR/MLP, MLP/LR, MLP/MLP


def _retrain_cached(fingerprint: str, spec_json: str, options_json: str, frame: pd.DataFrame,
                    show: Progress | None = None) -> RetrainResult:
    """The experiment, cached on data, spec and options, run on its own thread: a click elsewhere while it runs
    does not lose it (``show`` draws its progress and is not part of the key)."""
    return background_run("retrain", f"{fingerprint}|{spec_json}|{options_json}", lambda report: retrain(
        frame, AuditSpec.from_json(spec_json), RetrainOptions.from_json(options_json), progress=report), show)


@shared(max_entries=8)   # per owner, like the result itself
def _downloads(fingerprint: str, spec_json: str, options_json: str, _result: RetrainResult) -> tuple[bytes, bytes]:
    """The synthetic data (CSV) and the second model (skops) as bytes, made once per result."""
    return _result.synthetic_csv(), model_bytes(_result.second_model)


def render_options(spec: AuditSpec) -> RetrainOptions | None:
    """The retraining options (declared in luskin_core/spec/options.py); the core checks them."""
    ch = ch_.choices()
    opts = dict(ch["retrain"])
    form = OptionInputs("retrain", opts)
    ch_.seed("retrain_pair", f"{opts['first']}/{opts['second']}")
    left, right = st.columns(2)
    with left:
        form.show("algorithm")
        form.show("direction")
        form.show("all_cells")
    with right:
        pair = st.selectbox("Models: first (A1) / retrained (C2)", PAIRS, key="retrain_pair",
                            help="LR: logistic regression; MLP: a small neural network. The paper finds that "
                                 "C2 = MLP closes the gap, C2 = LR barely moves it.")
        form.drawn("first", "second")  # one choice of the pair
        form.show("seed")
        form.rest()  # any other option the tool declares
    first, second = pair.split("/")
    opts.update(first=first, second=second)
    ch["retrain"] = opts
    chosen = ch.get("features")
    features = tuple(c for c in chosen if c != spec.outcome) if chosen else None
    return cast("RetrainOptions | None", form.checked("retrain", features=features))


def _paper_table(result: RetrainResult) -> pd.DataFrame:
    """The paper's table (a column per stage and filter cell, "A1 (LR), UE"): the AUCs, each class's share in percent
    and the gap in points, as every table writes them (luskin_core.formatting's kinds).

    st.table renders Markdown in its cells and headers: the group and cell names are escaped. The row names are a
    column of their own, so that no header cell is empty (a screen reader names each column by its header).
    """
    table = result.paper_table(gap=True)
    kinds = [cells.AUC if name == "AUC" else cells.GAP if name == "Gap" else cells.SHARE for name in table.index]
    shown = pd.DataFrame({"Measure": [ui.md(kind.heading("Share, " + name if kind is cells.SHARE else name))
                                      for name, kind in zip(table.index, kinds)]})
    for column in table.columns:
        shown[ui.md(", ".join(str(part) for part in column))] = [
            "–" if pd.isna(v) else kind.text(v) for v, kind in zip(table[column], kinds)]
    return shown


def render_result(result: RetrainResult, key: tuple[Any, ...]) -> None:
    """Warnings, AUCs, the gap chart, the paper-style table, how labels were changed, and the downloads."""
    ui.show_warnings(result.correction)
    a, b, c = st.columns(3)
    a.metric(f"AUC of A1 ({result.options.first})", cells.AUC.text(result.auc_first), help=HELP["auc"])
    b.metric(f"AUC of C2 ({result.options.second})", cells.AUC.text(result.auc_second),
             f"{result.auc_second - result.auc_first:+.3f}", help=HELP["auc"])   # st.metric reads the sign
    c.metric("Time", f"{result.timings.get('total', 0):.1f} s")
    ui.chart(plots.retrain_gaps(result), key="retrain_chart")
    st.markdown("**The paper's table** (held-out rows D4): share with a positive outcome per group and "
                "filter cell for the original labels, the first model A1 and the retrained C2, with each "
                "model's AUC against the original labels.")
    st.table(_paper_table(result), hide_index=True)
    st.markdown(ui.bullet_list([gap.sentence for gap in result.second.gaps], prefix="**C2:** "))
    with st.expander("How the training labels were changed"):
        st.markdown(ui.bullet_list(result.relabelling.sentences()))
        sizes = ", ".join(f"{k}: {v:,}" for k, v in result.sizes.items())
        st.caption(ui.md(f"Rows per split: {sizes} (split stratified by {result.stratified_by}). "
                         f"Model inputs: {', '.join(result.features)}.", 3000))
    data_bytes, model = _downloads(*key)
    left, right = st.columns(2)
    ui.download_button("Download the synthetic training data (CSV)", data_bytes, where=left, file_name="luskin-synthetic-D3.csv",
                         mime="text/csv", key="retrain_download_data", icon=ui.ICONS["download"],
                         help="D2's rows with the first model's risk and the labels before and after relabelling.")
    ui.download_button("Download the retrained model C2 (skops)", model, where=right, file_name="luskin-C2.skops",
                          mime="application/octet-stream", key="retrain_download_model", icon=ui.ICONS["download"],
                          help="skops format, read back with luskin_core.corrections.retrain.load_model.")


def _what_is_trained(data: Any) -> str:
    """What the button starts, for the data loaded (its rows; no time promised that another file measured)."""
    if data.engine is not None:
        return "two models are trained on a sample of the source's rows (said when it is drawn)."
    return (f"two models are trained on {0.4 * len(data.frame):,.0f} rows each of this data's {len(data.frame):,} "
            "(a larger file takes longer).")


def render_run(spec: AuditSpec, options: RetrainOptions) -> None:
    """The Retrain button (absent when the result is kept or under way), the progress bar and the result."""
    data = dataset.dataset()
    key = (data.fingerprint, spec.to_json(), options.to_json())
    asked = is_asked("retrain", "|".join(key))
    if not (asked or st.button("Retrain", key="retrain_run", type="primary")):
        st.info(f"Press **Retrain** to run the experiment: {_what_is_trained(data)} "
                "Results are kept: coming back to the same choices shows them at once.", icon=ui.ICONS["info"])
        return
    bar = st.progress(0.0, text="Starting…")

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=message)

    result = ui.guarded(_retrain_cached, *key, source_view.model_rows(spec), progress, where="retrain")
    bar.empty()
    if result is not None:
        remember("retrain", spec, result)
        render_result(result, (*key, result))


st.title("Retrain: a model that is fair within each filter cell")
st.markdown("The data is split 40/40/20. A first model (A1) learns from 40%; its risk scores are used to "
            "make the labels of the next 40% fair inside the filter cell; a second model (C2) learns from "
            "those labels. Both are judged on the last 20%, which neither has seen.")
spec_ = ui.require_spec("retrain")
options_ = render_options(spec_)
if options_ is not None:
    ui.require_model_inputs(spec_, "retrain")
    render_run(spec_, options_)
