"""Data page (entry): load data, preview it, choose the outcome and the protected group.

For an uploaded file the first choices are Luskin's guesses (said on screen); the first verdict
is drawn once the user presses "Use these choices". Every error shown here comes with its way
out on this page.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import config, dataset, keys, session, source_view, ui
from luskin_app.auditing import run_audit
from luskin_app.choices import Choices
from luskin_app.help import HELP
from luskin_core.corrections.models import FeatureChoice, choose_features
from luskin_core.counting.data import PRESETS, column_summary
from luskin_core.counting.executor import executor_for, group_names
from luskin_core.counting.memory import cut_into_ranges
from luskin_core.errors import LuskinError
from luskin_core.present.report_parts import ANALYSES
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.guess import guess_group, guess_positive, outcome_direction
from luskin_core.spec.validation import value_key
from luskin_core.stats.judgement import ScoreRule

NUMBER_OPS = ["==", "!=", "<", "<=", ">", ">="]
PREVIEW_CHARS = 1_000  # longer cells are shortened in the preview (the data keeps them whole)


def _use_sample(name: str) -> None:
    session.use_sample(name)
    st.session_state.pop(keys.UPLOAD_ERROR, None)
    st.session_state.pop(keys.UPLOAD_NOTE, None)


def render_loader() -> None:
    """One-click samples and a drag-and-drop CSV upload; a bad file never replaces good data."""
    st.header("1. Choose the data", anchor=False)
    row = st.container(horizontal=True, key="sample_buttons")   # one stop of the Tab order (ui.A11Y_SCRIPT)
    for name in dataset.available_samples():
        row.button(f"Use sample: {dataset.SAMPLE_TITLES[name]}", key=f"sample_{name}", on_click=_use_sample,
                   args=(name,), help=PRESETS[name].title + ". " + PRESETS[name].note)
    upload = st.file_uploader(
        "Upload a CSV file (drag and drop it here)", key="upload_csv",
        help="A table saved as CSV with a header row: comma, semicolon or tab separated; UTF-8 or Latin-1. "
             "Luskin guesses its outcome and protected group from the column names and values: check them below.",
    )
    if upload is None:
        st.session_state.pop(keys.UPLOAD_ERROR, None)
        st.session_state.pop(keys.UPLOAD_NOTE, None)
    elif dataset.is_new_upload(upload, "upload_token"):
        st.session_state.pop(keys.UPLOAD_ERROR, None)
        st.session_state.pop(keys.UPLOAD_NOTE, None)
        try:
            with st.spinner("Reading the file…"):
                st.session_state[keys.UPLOAD_NOTE] = session.use_upload(upload.name, upload.getvalue())
        except LuskinError as err:
            st.session_state[keys.UPLOAD_ERROR] = f"'{upload.name}' could not be used: {err}"
    if st.session_state.get(keys.UPLOAD_ERROR):
        st.error(ui.md(st.session_state[keys.UPLOAD_ERROR]) + " The data loaded before is still in use: upload "
                 "another file, or choose a sample above.", icon=ui.ICONS["error"])
    if st.session_state.get(keys.UPLOAD_NOTE):
        st.success(ui.md(st.session_state[keys.UPLOAD_NOTE]), icon=ui.ICONS["ok"])
    if st.session_state.get(keys.KEPT_KEY) and dataset.dataset().ref.is_upload:
        row = st.container(horizontal=True, vertical_alignment="center")
        row.caption(session.kept_note())
        row.button("Forget this file now", key="kept_forget", icon=":material/delete:", on_click=session.forget_kept,
                   help="The server deletes its copy at once; the address will no longer bring it back.")


def render_pending_config() -> None:
    """A loaded configuration waiting for its file: which file to upload, or apply it to this data."""
    waiting = config.pending()
    if st.session_state.get(keys.CONFIG_ERROR):
        st.error(ui.md(st.session_state.pop(keys.CONFIG_ERROR)) + " Nothing was changed.", icon=ui.ICONS["error"])
    if waiting is None:
        return
    st.info(f"The configuration **{ui.md(waiting.name, 80)}** is waiting for the file it was saved with: upload "
            f"**{ui.md(waiting.wanted, 120)}** above and it is applied at once.", icon=ui.ICONS["wait"])
    why_not = config.fits_current()
    row = st.container(horizontal=True)
    if why_not is None:
        row.button("Apply it to the data loaded now", key="pending_apply", on_click=config.apply_pending_here,
                   help="Its columns exist in the data on screen; the numbers differ from the saved ones if the "
                        "data does.")
    row.button("Forget this configuration", key="pending_discard", on_click=config.discard_pending)
    if why_not is not None:
        st.caption(f"It cannot be applied to the data loaded now: {ui.md(why_not, 300)}")


@st.cache_data(show_spinner=False, max_entries=8)
def _summary(fingerprint: str, _frame: pd.DataFrame) -> pd.DataFrame:
    summary = column_summary(_frame)
    summary["Examples"] = summary["Examples"].map(lambda text: _clip(text, 200))
    return summary


# What the page shows of a dataset that depends on its rows alone, made once per dataset (its fingerprint) rather than
# once per session: eight analysts opening the dashboard at once each computed them again from the same sample
# (the distinct values of every column for the model's columns were 30% of a warm first visit's server time,
# benchmarks/bench_first_visits.py). A function of the bytes only: an analyst holding the same bytes gets what
# they would compute themselves.
@st.cache_data(show_spinner=False, max_entries=16)
def _auto_features(fingerprint: str, outcome: str, _frame: pd.DataFrame) -> FeatureChoice | str:
    try:
        return choose_features(_frame, outcome)
    except LuskinError as err:
        return str(err)


@st.cache_data(show_spinner=False, max_entries=16)
def _look(fingerprint: str, _frame: pd.DataFrame) -> tuple[int, pd.DataFrame]:
    """The missing cells and the first rows (shortened) of the dataset ``fingerprint``."""
    return int(_frame.isna().sum().sum()), _preview(_frame)


def _clip(value: Any, limit: int = PREVIEW_CHARS) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}… ({len(value):,} characters)"
    return value


def _preview(frame: pd.DataFrame) -> pd.DataFrame:
    """The first rows, with very long text cells shortened (a 50 MB cell must not travel to the browser)."""
    head = frame.head(50).copy()
    for name in head.columns:
        if not ch_.is_numeric(head[name]) and head[name].map(lambda v: isinstance(v, str) and len(v) > PREVIEW_CHARS).any():
            head[name] = head[name].map(_clip)
    return head


def render_preview() -> None:
    """Row and column counts, missing values, the first rows and a per-column summary."""
    data = dataset.dataset()
    if source_view.render_source_preview(data):  # a configured source: no rows to show
        return
    frame = data.frame
    st.header("2. Look at the data", anchor=False)
    st.markdown(f"**{ui.md(data.title, 200)}**")
    missing, preview = _look(data.fingerprint, frame)
    a, b, c = st.columns(3)
    a.metric("Rows", f"{len(frame):,}")
    b.metric("Columns", f"{frame.shape[1]:,}")
    c.metric("Missing values", f"{missing:,}",
             help="Empty cells (blank, '?', NA ...). Rows missing the outcome or the protected value are "
                  "left out of the audit, and the pages say how many.")
    ui.grid(preview, key="data_preview", height=260, raw=True, hide_index=True)   # the file as it is
    with st.expander("Columns: type, missing values, distinct values"):
        ui.grid(_summary(data.fingerprint, frame), hide_index=True, key="data_columns")


def _sanitize(key: str, options: list[Any], fallback: Any) -> None:
    """Keep a widget's remembered value only when it is still one of the options."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = fallback


def _as_list(value: Any) -> list[Any]:
    """The positive value(s) as the multiselect holds them: a list (none, one or several)."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _first_positive(series: pd.Series, options: list[Any]) -> Any:
    """The value that means "yes" when recognisable (1, yes, approved, >50K ...), else the most common."""
    guess = guess_positive(series).value
    matches = [v for v in options if str(v) == str(guess) or v == guess]
    return matches[0] if matches else options[0]


def render_outcome(frame: pd.DataFrame, ch: Choices) -> None:
    """Outcome column and the value that counts as positive."""
    columns = list(frame.columns)
    ch_.seed("outcome", ch["outcome"])
    _sanitize("outcome", columns, columns[-1])
    outcome = st.selectbox("Outcome column (the decision or label to audit)", columns, key="outcome",
                           format_func=ui.option_text, help="For example income, frisked or two_year_recid.")
    if is_score_outcome(frame[outcome]):
        render_score_outcome(frame, outcome, ch)
        return
    reading = ch_.audit_choice(ch, "outcome_type")
    # a score set here or on the Audit page, or an amount read here (its column is the Data page's outcome)
    score_on = reading == "score" or (reading == "amount" and ch_.audit_choice(ch, "score_column") == ch["outcome"])
    if score_on and (outcome != ch["outcome"] or ch_.audit_choice(ch, "score_column") == outcome):
        # back to a column of a few values (score mode set here or on the Audit page): its values again
        ch.update({"outcome_type": "label", "score_column": None, "score_cutoff": None})
        _forget_audit_score()
    options = ch_.value_options(frame[outcome])
    ch_.seed("positive", _as_list(ch["positive"]))
    if not options:
        problem = (f"The column '{outcome}' has no values short enough to choose from." if frame[outcome].notna().any()
                   else f"The column '{outcome}' has no values at all (every row is missing).")
        st.error(ui.md(problem) + " Choose another outcome column above.", icon=ui.ICONS["error"])
        ch.update({"outcome": outcome, "positive": None})
        return
    if outcome != ch["outcome"]:
        st.session_state[keys.POSITIVE] = [_first_positive(frame[outcome], options)]
    before = _as_list(st.session_state.get(keys.POSITIVE))
    # the options' own objects (1 chosen from a column of 1.0 and 0.0 is the option 1.0); values this column does
    # not hold give way to its first guess
    kept = [next(o for o in options if o == v) for v in before if v in options]
    st.session_state[keys.POSITIVE] = kept if kept or not before else [_first_positive(frame[outcome], options)]
    chosen = st.multiselect("Positive values (what counts as a 'yes'; several are counted together)", options,
                            key="positive", format_func=ui.option_text,
                            help="The outcome values whose share is compared, e.g. >50K, Y or 1; choose several for "
                                 "an outcome such as 'Fail or Withdrawn'.")
    positive: Any = None if not chosen else chosen[0] if len(chosen) == 1 else list(chosen)
    distinct = frame[outcome].nunique(dropna=True)
    if distinct > 10 and positive is not None:
        st.warning(ui.md(f"'{outcome}' has {distinct:,} different values. The audit compares the share of rows "
                         f"whose value is exactly {' or '.join(repr(ui.option_text(v)) for v in chosen)}; an outcome "
                         "is usually a yes/no decision."), icon=ui.ICONS["info"])
    ch.update({"outcome": outcome, "positive": positive})
    if positive is not None:
        render_outcome_is(outcome, positive, ch)


def is_score_outcome(series: pd.Series) -> bool:
    """A numeric outcome with many values (a score, hours worked): the core's one rule for a column cut into
    ranges (``cut_into_ranges``), so that "ai_score is exactly 67.8" is never what is audited."""
    return ch_.is_numeric(series) and cut_into_ranges(series)


SCORE_RULES = {"median": "Above its median (strictly above, as NYC Local Law 144's scoring rate)",
               "cutoff": "At or above a cut-off"}
AMOUNT_RULE = {"amount": "An amount: compare its mean and median per group (the Amounts page)"}


def _forget_audit_score() -> None:
    """The Audit page's score widgets take the choices again when next shown (the Data page changed them)."""
    for key in (keys.AUDIT_OUTCOME_TYPE, keys.AUDIT_SCORE_COLUMN, keys.AUDIT_CUTOFF_MEDIAN, keys.AUDIT_CUTOFF):
        st.session_state.pop(key, None)


def _amounts_page() -> bool:
    """Whether the amounts analysis has a page of its own (its line of the analyses' table says so)."""
    return any(entry.name == "amounts" and entry.page for entry in ANALYSES)


def render_score_outcome(frame: pd.DataFrame, outcome: str, ch: Choices) -> None:
    """A numeric outcome of many values is read as a score at once: above its median (the one rule,
    ``ScoreRule``) or at or above a cut-off the user gives; or, chosen and never the default, as an amount (its mean
    and median per group, on the Amounts page). The Audit page shows the same choice."""
    series = frame[outcome]
    reading = ch_.audit_choice(ch, "outcome_type") if ch_.audit_choice(ch, "score_column") == outcome else None
    was_score, was_amount = reading == "score", reading == "amount" and _amounts_page()
    cutoff = ch_.audit_choice(ch, "score_cutoff") if was_score else None
    if not (was_score or was_amount):
        st.session_state.pop(keys.OUTCOME_SCORE_RULE, None)
        st.session_state.pop(keys.OUTCOME_CUTOFF, None)
    rules = {**SCORE_RULES, **(AMOUNT_RULE if _amounts_page() else {})}   # the amount: where it has its page
    ch_.seed(keys.OUTCOME_SCORE_RULE, "amount" if was_amount else "median" if cutoff is None else "cutoff")
    distinct = int(series.nunique(dropna=True))
    rule = st.radio(f"'{ui.md(outcome, 60)}' is a number with {distinct:,} different values: which rows count as "
                    "the outcome?", list(rules), key="outcome_score_rule", format_func=rules.get,
                    help="A share is compared between groups, so a number is read as a yes above a line: its "
                         "median, or a cut-off you give (e.g. the score that passes a screen). Pay or a price "
                         "is better read as an amount: each group's mean and median, with no line drawn.")
    if rule == "amount":
        render_amount_outcome(outcome, ch, changed=not was_amount)
        return
    middle = series.median()
    median = float(middle) if pd.notna(middle) else None
    if rule == "cutoff":
        ch_.seed(keys.OUTCOME_CUTOFF, float(cutoff if cutoff is not None else (median or 0.0)))
        cutoff = float(st.number_input(f"Cut-off ({ui.md(outcome, 60)} at or above it counts)", key="outcome_cutoff"))
    else:
        cutoff = None
    if median is not None:
        st.caption(f"The median of {ui.md(outcome, 60)} is {median:g}.")
    if _amounts_page():
        st.caption(f"Or audit {ui.md(outcome, 60)} as an amount (means and medians per group, no line drawn): "
                   "the third choice above, shown on the Amounts page.")
    changed = (not was_score) or ch_.audit_choice(ch, "score_cutoff") != cutoff
    ch.update({"outcome": outcome, "positive": None, "outcome_type": "score", "score_column": outcome,
               "score_cutoff": cutoff})
    if changed:
        _forget_audit_score()
    # the direction is asked once for the score, not again for each cut-off typed
    render_outcome_is(outcome, ScoreRule(cutoff).words(), ch, asked_once_for="a high score")


def render_amount_outcome(outcome: str, ch: Choices, *, changed: bool) -> None:
    """The outcome read as an amount: the same choices the Audit page's "An amount" makes (its column, no cut-off),
    so that the Audit and Amounts pages agree; the direction is the score's (a higher amount), asked once."""
    ch.update({"outcome": outcome, "positive": None, "outcome_type": "amount", "score_column": outcome,
               "score_cutoff": None})
    if changed:
        _forget_audit_score()
    st.caption(f"Each group's mean and median of {ui.md(outcome, 60)}, their gaps as shares of the reference's, "
               "and the verdicts are on the Amounts page (in the menu).")
    render_outcome_is(outcome, None, ch, asked_once_for="a high score", said="higher")


OUTCOME_MEANING_LABELS = {
    "favourable": "Good for the person (favourable: hired, admitted, approved)",
    "adverse": "Bad for the person (adverse: denied, a default, an arrest)",
}


def render_outcome_is(outcome: str, positive: Any, ch: Choices, asked_once_for: str | None = None,
                      said: str | None = None) -> None:
    """Is the counted outcome good or bad for the person? Recognised from the names by the core's one rule
    (``outcome_direction``), said on screen and changeable; where the names do not say, nothing is chosen and the
    page asks: no verdict is drawn until the user answers. ``said``: the words shown for an outcome with no value
    counted (an amount: 'higher'), guessed from its name alone as the command line does."""
    guess = outcome_direction(outcome, positive)
    seen = (outcome, asked_once_for or str(positive))   # a score's direction: once, whatever its line
    answers = st.session_state.setdefault(keys.OUTCOME_IS_ANSWERS, {})   # the user's answers, per outcome and value
    if st.session_state.get(keys.OUTCOME_IS_SEEN) not in (None, seen) or keys.OUTCOME_IS not in st.session_state:
        first_visit = st.session_state.get(keys.OUTCOME_IS_SEEN) is None
        st.session_state[keys.OUTCOME_IS] = (ch.get("outcome_is") if first_visit and ch.get("outcome_is")
                                             else answers.get(str(seen), guess.value))
    st.session_state[keys.OUTCOME_IS_SEEN] = seen
    counted = (said if said is not None else ui.option_text(value_key(positive))
               if not isinstance(positive, (list, tuple)) else " or ".join(ui.option_text(value_key(v)) for v in positive))
    shown = ui.md(counted, 60)
    meaning = st.radio(f"Is '{ui.md(outcome, 60)} is {shown}' good or bad for the person?",
                       list(OUTCOME_MEANING_LABELS), key="outcome_is", format_func=OUTCOME_MEANING_LABELS.get,
                       horizontal=True, help="It decides who is 'favoured' by a gap, and the four-fifths rule is "
                                             "applied to the favourable share (1 minus the share of an adverse "
                                             "outcome), as the EEOC and NYC Local Law 144 do.")
    if meaning is None:
        st.warning(f"Luskin cannot tell from the names whether '{ui.md(outcome, 60)} is {shown}' is good or bad for "
                   "the person: choose one above. No verdict is drawn until you do (the wrong one would call the "
                   "group it harms 'favoured').", icon=ui.ICONS["guess"])
    else:
        who = "the group with the lower share" if meaning == "adverse" else "the group with the higher share"
        why = guess.reason if meaning == guess.value else "your choice"
        if said is not None:
            who = "the group with the lower amount" if meaning == "adverse" else "the group with the higher amount"
        st.caption(ui.md(f"Counted: {outcome} is {said if said is not None else ui.option_text(value_key(positive)) if not isinstance(positive, (list, tuple)) else ' or '.join(map(str, positive))}, "
                         f"{meaning} ({why}); {who} is the favoured one."))
    if meaning is not None and meaning != guess.value:
        answers[str(seen)] = meaning
    ch.update({"outcome_is": meaning})


def _group_from_guess(series: pd.Series, options: list[Any]) -> tuple[list[Any], str, float]:
    """Values, comparison and number of the protected group Luskin guesses for a newly chosen column."""
    condition = guess_group(series).value
    if condition is None:
        return options[:1], ">=", 0.0
    if ch_.is_numeric(series):
        return [], condition.op if condition.op in NUMBER_OPS else ">=", float(condition.value)
    values = [v for v in options if str(v) == str(condition.value)]
    return (values or options[:1]), ">=", 0.0


def render_protected(frame: pd.DataFrame, ch: Choices) -> None:
    """Protected column and group: values for text, a comparison for numbers."""
    columns = [c for c in frame.columns if c != ch["outcome"]]
    if not columns:   # a table of one column: nothing to compare the outcome across
        st.error("This data has a single column: an audit needs at least two (the outcome and a protected column). "
                 "Upload another file or choose a sample above.", icon=ui.ICONS["error"])
        st.stop()
    ch_.seed("protected_column", ch["protected_column"])
    _sanitize("protected_column", columns, columns[0])
    column = st.selectbox("Protected column (e.g. race or sex)", columns, key="protected_column",
                          format_func=ui.option_text, help="The attribute the decision must not depend on.")
    changed = column != ch["protected_column"]
    series = frame[column]
    options = ch_.value_options(series)
    if ch_.is_numeric(series):
        if changed:
            _, op, number = _group_from_guess(series, options)
            st.session_state[keys.PROTECTED_OP] = op
            st.session_state[keys.PROTECTED_NUMBER] = number
        ch_.seed("protected_op", ch["protected_op"] if ch["protected_op"] in NUMBER_OPS else ">=")
        ch_.seed("protected_number", float(ch["protected_number"] or 0.0))
        left, right = st.columns([1, 2])
        op = left.selectbox("Comparison", NUMBER_OPS, key="protected_op",
                            help="The protected group is the rows where the column compares true.")
        number = right.number_input(f"Value of {ui.md(column, 80)}", key="protected_number")
        ch.update({"protected_column": column, "protected_op": op, "protected_number": number})
    else:
        if changed:
            st.session_state[keys.PROTECTED_VALUES] = _group_from_guess(series, options)[0]
        ch_.seed("protected_values", [v for v in ch["protected_values"] if v in options] or options[:1])
        st.session_state[keys.PROTECTED_VALUES] = [v for v in st.session_state[keys.PROTECTED_VALUES] if v in options]
        values = st.multiselect("Protected group: the values that form it", options, key="protected_values",
                                format_func=ui.option_text,
                                help="Rows with any of these values form the group; all other rows the other class.")
        ch.update({"protected_column": column, "protected_values": list(values)})
        hidden = ch_.long_values(series)
        if hidden:
            st.caption(f"{hidden:,} value{'s' if hidden > 1 else ''} longer than {ch_.MAX_VALUE_CHARS:,} characters "
                       "cannot be chosen here.")
    try:
        condition = ch_.protected_condition(ch, frame).to_dict()
    except LuskinError:
        condition = None
    if condition != ch.get("protected_condition"):
        ch["protected_condition"] = condition
        st.session_state[keys.GROUP_LABEL] = ""
        st.session_state[keys.OTHER_LABEL] = ""


def _automatic_names(frame: pd.DataFrame, ch: Choices) -> tuple[str, str]:
    """The names the audit will use for the two groups when the user types none (from the data)."""
    try:
        condition = ch_.protected_condition(ch, frame)
        spec = AuditSpec(ch.get("outcome") or "outcome", positive=ch.get("positive") or 1, protected=condition)
        return spec.group_name, group_names(executor_for(frame), spec).other
    except LuskinError:
        return "from the values", "everyone else"


def render_names(frame: pd.DataFrame, ch: Choices) -> None:
    """The names committee members will read for the two groups, asked right below where the group is chosen."""
    group_auto, other_auto = _automatic_names(frame, ch)
    ch_.seed("group_label", ch.get("group_label") or "")
    ch_.seed("other_label", ch.get("other_label") or "")
    left, right = st.columns(2)
    group = left.text_input("Name of the protected group (on charts and slides)", key="group_label", max_chars=200,
                            placeholder=f"automatic: {group_auto}"[:200])
    other = right.text_input("Name of everyone it is compared with", key="other_label", max_chars=200,
                             placeholder=f"automatic: {other_auto}"[:200])
    ch.update({"group_label": group.strip(), "other_label": other.strip()})


MAX_NAMED_VALUES = 12   # a column with more distinct values is not offered for naming here


def _named_columns(frame: pd.DataFrame, ch: Choices) -> list[str]:
    """The outcome and protected columns, when their values are few enough to name one by one."""
    out = []
    for column in (ch.get("outcome"), ch.get("protected_column")):
        if column in frame.columns and column not in out and frame[column].nunique(dropna=True) <= MAX_NAMED_VALUES:
            out.append(str(column))
    return out


def _set_value_name(column: str, code: str, key: str) -> None:
    """A name typed for a code goes into the choices (saved with the settings); an empty box removes it."""
    names = dict(ch_.choices().get("value_names") or {})
    mine = dict(names.get(column) or {})
    text = str(st.session_state.get(key) or "").strip()
    if text:
        mine[code] = text
    else:
        mine.pop(code, None)
    if mine:
        names[column] = mine
    else:
        names.pop(column, None)
    ch_.choices()["value_names"] = names
    st.session_state.pop(keys.SPEC_MEMO, None)


def render_value_names(frame: pd.DataFrame, ch: Choices) -> None:
    """Names for coded values ("1" -> "Female"), used on every chart, sentence, slide and report, and saved."""
    columns = _named_columns(frame, ch)
    if not columns:
        return
    names = ch.get("value_names") or {}
    named = sum(len(v) for v in names.values())
    # One label and a key: the expander stays open while names are typed (its label counted the names, so each
    # entry drew a new, closed expander).
    with st.expander("Names for coded values (e.g. 1 → Female)", icon=":material/label:", key="value_names_open",
                     on_change="rerun"):
        st.caption("Give a code the name a committee uses; leave a box empty to show the value itself."
                   + (f" Named so far: {named}." if named else ""))
        for c_index, column in enumerate(columns):
            values = [v for v in pd.unique(frame[column].dropna())][:MAX_NAMED_VALUES]
            codes = sorted({value_key(v) for v in values}, key=lambda t: (len(t), t))
            given = {str(k): str(v) for k, v in (names.get(column) or {}).items()}
            boxes = st.columns(min(len(codes), 4) or 1)
            for v_index, code in enumerate(codes):
                key = f"value_name_{c_index}_{v_index}"
                st.session_state[key] = given.get(code, "")     # the choices are the truth (a loaded file too)
                boxes[v_index % len(boxes)].text_input(
                    f"{ui.md(column, 60)} = {ui.md(code, 60)}", key=key, max_chars=100,
                    placeholder=ui.option_text(code), on_change=_set_value_name, args=(column, code, key))


def render_features(frame: pd.DataFrame, ch: Choices) -> None:
    """The columns the models may use (Retrain, Thresholds, Equalized distribution).

    Every column but the outcome is the default; an analyst must be able to take out columns
    that record the outcome again or a score made from it (COMPAS's decile_score), which would
    make any model look perfectly accurate and hide the bias being audited.
    """
    outcome = ch.get("outcome")
    if not isinstance(outcome, str) or outcome not in frame.columns:
        return
    with st.expander("Columns the models may use (Retrain, Thresholds, Equalized distribution)"):
        auto = _auto_features(dataset.dataset().fingerprint, outcome, frame)
        if isinstance(auto, str):
            st.info(ui.md(auto), icon=ui.ICONS["info"])
            return
        options = [c for c in frame.columns if c != outcome]
        chosen_before = [c for c in (ch.get("features") or auto.columns) if c in options]
        ch_.seed("model_features", chosen_before)
        st.session_state[keys.MODEL_FEATURES] = [c for c in st.session_state[keys.MODEL_FEATURES] if c in options]
        chosen = st.multiselect(
            "Model input columns", options, key="model_features", format_func=ui.option_text,
            help="Take out any column that records the outcome again, or comes after the decision "
                 "(e.g. a re-arrest date, or a risk score built from the outcome): a model that sees it "
                 "looks perfect and hides the bias. The protected column may stay: the paper's models use it.")
        if auto.dropped:
            st.caption("Left out by default: " + ui.md("; ".join(f"{c} ({why})" for c, why in auto.dropped.items()),
                                                       2000) + ".")
        if not chosen:
            st.warning("No column is chosen, so the models will use every column but the outcome.", icon=ui.ICONS["error"])
        ch["features"] = list(chosen) if chosen and list(chosen) != list(auto.columns) else None


VERDICT_ID = "luskin-verdict"   # where "Skip to the verdict" lands (the page's own constant, no user text)


def render_status(skip: Any) -> None:
    """Whether the choices make an audit possible, in plain words, with the way forward.

    Once the verdict is drawn, ``skip`` (a placeholder at the top of the page) gets a link to it: a keyboard or
    screen-reader user reaches it without crossing the loader, the preview and every choice (WCAG 2.4.1).
    """
    spec, problem = ch_.current_spec()
    if spec is None:
        ui.show_problem(str(problem), "data", data_link=False)
        if ch_.needs_confirmation():
            ui.render_confirm("data")
        return
    names = ch_.class_names(spec)   # the rest by its value ("Male", never "Non-Female")
    # groups by columns (chosen on the Audit page) have no "rest": "each sex group", as the sidebar says, not
    # "sex with " and an empty name ("comparing gender with ****": Markdown's empty bold shown as it is)
    compared = (f"**{ui.md(spec.groups_text, 160)}**" if spec.group_by
                else f"**{ui.md(names.group, 80)}** with **{ui.md(names.other, 80)}**")
    what = (f"the mean and median of **{ui.md(spec.outcome, 80)}**" if spec.outcome_type == "amount"
            else f"the share where **{ui.md(spec.outcome_text, 160)}**")
    if ch_.needs_confirmation():
        st.info(f"Check the choices above, then press **Use these choices** to compare {compared} on {what}.",
                icon=ui.ICONS["guess"])
        ui.render_confirm("data")
        return
    if spec.outcome_type == "amount":   # its means and medians: the Amounts page (made from the analyses' table)
        st.success(f"Ready: comparing {compared} on {what}, "
                   "on the Amounts page (in the menu).", icon=ui.ICONS["ok"])
        return
    st.success(f"Ready: comparing {compared} on the share where **{ui.md(spec.outcome_text, 160)}**.",
               icon=ui.ICONS["ok"])
    if spec.population:
        st.caption("Rows restricted to: " + ui.md(" and ".join(c.describe() for c in spec.population), 300) + ".")
    result = ui.guarded(run_audit, spec, where="data")
    if result is not None:
        st.markdown(f'<span id="{VERDICT_ID}" tabindex="-1"></span>', unsafe_allow_html=True)
        st.markdown("**At a glance:**\n" + ui.bullet_list(result.sentences()))
        skip.markdown(f"[Skip to the verdict](#{VERDICT_ID})")
    st.page_link(ui.PAGE_FILES["audit"], label="See the audit: chart, table and filter", icon=ui.ICONS["audit"])


st.title("Luskin: is the decision fair between groups?", anchor=False)
st.markdown("Load a table of decisions (or a sample), then say which column is the decision and which "
            "group to compare. Every other page uses these choices.")
skip_ = st.empty()   # "Skip to the verdict", once there is one (render_status)
render_loader()
session.render_sources()
render_pending_config()
render_preview()
# the help on guesses where there are guesses (an uploaded file's; a sample comes with its choices)
st.header("3. Choose the outcome and the protected group", help=HELP["guesses"] if ch_.guesses() else None,
          anchor=False)
guesses_box_ = st.container()   # filled after the choices below, so it says what was changed on this very run
frame_ = dataset.dataset().frame
choices_ = ch_.choices()
left_, right_ = st.columns(2)
with left_:
    render_outcome(frame_, choices_)
with right_:
    render_protected(frame_, choices_)
with guesses_box_:
    ui.render_guesses()
# The verdict right after the choices it needs, the optional ones after it (issue 46: by Tab alone the verdict
# is reached without crossing the names and the models' columns); drawn last, once those are read.
status_box_ = st.container()
render_names(frame_, choices_)
render_value_names(frame_, choices_)
render_features(frame_, choices_)
with status_box_:
    render_status(skip_)
