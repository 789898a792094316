"""Model pipelines: the paper's LR and MLP (and a linear SVM), each with its own preprocessing.

Every model is a scikit-learn Pipeline that takes the user's columns as they are (text and
numbers, with missing values) so that the page, the command line and the report train exactly
the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, StandardScaler
from sklearn.svm import LinearSVC

from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import resolve_column
from luskin_core.spec.options import check_kind

# A text column with more distinct values than this, and mostly unique, is an identifier
# (a name, a case number): it cannot generalise, so it is left out unless named explicitly.
ID_LIKE_DISTINCT = 200
ID_LIKE_UNIQUE_SHARE = 0.5


@dataclass(frozen=True)
class FeatureChoice:
    """The columns a model uses, and those left out automatically with the reason."""

    columns: tuple[str, ...]
    dropped: dict[str, str]


def choose_features(
    frame: pd.DataFrame,
    outcome: str,
    features: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
) -> FeatureChoice:
    """Every column but the outcome (and identifier-like text), unless ``features`` names them."""
    outcome_col = resolve_column(frame, outcome, "outcome")
    excluded = {resolve_column(frame, c, "excluded") for c in exclude}
    dropped: dict[str, str] = {}
    if features:
        columns = [resolve_column(frame, c, "feature") for c in features]
        if outcome_col in columns:
            raise LuskinError(f"The outcome '{outcome_col}' cannot also be a feature of the model.")
        columns = [c for c in columns if c not in excluded]
    else:
        columns = []
        for name in frame.columns:
            if name == outcome_col or name in excluded:
                continue
            series = frame[name]
            if series.isna().all():
                dropped[name] = "no values"
            elif series.nunique(dropna=True) < 2:
                dropped[name] = "a single value"
            elif not pd.api.types.is_numeric_dtype(series) and _id_like(series):
                dropped[name] = "identifier-like text (almost every row different)"
            else:
                columns.append(name)
    if not columns:
        raise LuskinError("No column is left to train a model on: name the feature columns to use.")
    return FeatureChoice(tuple(columns), dropped)


def _id_like(series: pd.Series) -> bool:
    distinct = series.nunique(dropna=True)
    return distinct > ID_LIKE_DISTINCT and distinct > ID_LIKE_UNIQUE_SHARE * series.notna().sum()


def _preprocessor(frame: pd.DataFrame, columns: Sequence[str], *, dense: bool = False) -> ColumnTransformer:
    numeric = [c for c in columns if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])]
    categorical = [c for c in columns if c not in numeric]
    parts = []
    if numeric:
        parts.append(("numbers", make_pipeline(SimpleImputer(strategy="median", keep_empty_features=True),
                                               StandardScaler()), numeric))
    if categorical:
        parts.append(("categories", make_pipeline(
            SimpleImputer(strategy="constant", fill_value="(missing)", keep_empty_features=True),
            OneHotEncoder(handle_unknown="ignore", sparse_output=not dense)), categorical))
    return ColumnTransformer(parts, sparse_threshold=0.0 if dense else 0.3)


def _estimator(kind: str, random_state: int | None):
    if kind == "LR":
        return LogisticRegression(max_iter=2000)
    if kind == "MLP":
        return MLPClassifier(hidden_layer_sizes=(64,), early_stopping=True, max_iter=200,
                             random_state=random_state)
    return LinearSVC(random_state=random_state)


def plain_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as objects with NaN for missing: scikit-learn's imputers cannot test pandas' NA."""
    out = frame.copy()
    for name in out.columns:
        series = out[name]
        if pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
            out[name] = series.astype(object).where(series.notna(), np.nan)
        elif pd.api.types.is_extension_array_dtype(series):
            out[name] = series.astype(float)
    return out


def _plain_step() -> FunctionTransformer:
    return FunctionTransformer(plain_missing, feature_names_out="one-to-one")


def make_model(kind: str, frame: pd.DataFrame, columns: Sequence[str], *, random_state: int | None = 0) -> Pipeline:
    """An unfitted pipeline (imputation, scaling, one-hot) ending in an LR, MLP or linear SVM."""
    kind = check_kind(kind)
    return Pipeline([("plain", _plain_step()), ("prepare", _preprocessor(frame, columns)),
                     ("model", _estimator(kind, random_state))])


def compas_paper_pipeline(kind: str, *, random_state: int | None = 0, n_components: int = 20) -> Pipeline:
    """The paper's COMPAS features (section 4.3): 0/1 binaries, standardised counts, one-hot charge, PCA to 20."""
    kind = check_kind(kind)
    prepare = ColumnTransformer([
        ("binary", OneHotEncoder(drop="if_binary", handle_unknown="ignore", sparse_output=False),
         ["sex", "c_charge_degree"]),
        ("counts", StandardScaler(), ["age", "juv_fel_count", "juv_misd_count", "priors_count"]),
        ("charge", make_pipeline(SimpleImputer(strategy="constant", fill_value="(missing)"),
                                 OneHotEncoder(handle_unknown="ignore", sparse_output=False)), ["c_charge_desc"]),
    ], sparse_threshold=0.0)
    return Pipeline([("plain", _plain_step()), ("prepare", prepare), ("pca", PCA(n_components=n_components, random_state=random_state)),
                     ("model", _estimator(kind, random_state))])


def risk_scores(model: Pipeline, frame: pd.DataFrame) -> np.ndarray:
    """Scores where higher means more likely positive: probabilities, or SVM decision values."""
    if hasattr(model, "predict_proba"):
        try:
            return model.predict_proba(frame)[:, 1]
        except AttributeError:
            pass
    return model.decision_function(frame)


def default_threshold(model: Pipeline) -> float:
    """0.5 for probabilities, 0 for an SVM's decision values (the paper's 'before' thresholds)."""
    return 0.5 if hasattr(model, "predict_proba") and not isinstance(model[-1], LinearSVC) else 0.0
