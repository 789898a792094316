"""People simulated from the Census tables, with a known race, for checking the proxy estimators.

Why: no public file has self-reported race beside surnames and places, so the estimators are checked where the
truth is known. A surname is drawn uniformly from the Census 2010 list, race from that surname's
P(race | surname), a ZCTA from P(ZCTA | race); then BISG's P(race | surname, ZCTA) is exactly calibrated (Bayes'
rule with the very tables that drew the data). The outcome depends on true race only (``place_effect`` 0), or
also on the place (``place_effect`` > 0: a place's share of White residents moves everyone's chance there, the
case that breaks BIRDiE's pooled assumption). Every draw comes from the generator passed in.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from luskin_core.analyses.proxy import RACES, load_tables

# true rates by race (RACES order: hispanic, white, black, api, aian, multiracial): impact ratios against White
# 0.80, 0.70, 0.96, 0.76, 0.88
TRUE_RATES = np.array([0.40, 0.50, 0.35, 0.48, 0.38, 0.44])


@dataclass(frozen=True)
class _World:
    name_probs: np.ndarray       # P(race | surname), rows normalised
    name_cum: np.ndarray         # its cumulative sums, for drawing race
    zip_given_race: np.ndarray   # P(ZCTA | race), (places, 6), columns normalised
    zip_cum: np.ndarray          # cumulative over places, per race (6, places)
    white_share: np.ndarray      # P(White | ZCTA), centred and scaled to sd 1 over places weighted by residents
    names: np.ndarray
    places: np.ndarray


@functools.lru_cache(maxsize=1)
def world() -> _World:
    """The Census tables in the form the draws need (computed once)."""
    tables = load_tables()
    s = tables.surname.values
    s = s / s.sum(axis=1, keepdims=True)
    g = np.nan_to_num(tables.geo_given_race["zcta"].values)
    g = g / g.sum(axis=0, keepdims=True)
    white = np.nan_to_num(tables.race_given_geo["zcta"].values[:, RACES.index("white")], nan=0.5)
    weight = g.mean(axis=1)
    mean = float(weight @ white / weight.sum())
    sd = float(np.sqrt(weight @ (white - mean) ** 2 / weight.sum()))
    cum = np.cumsum(g, axis=0).T
    cum[:, -1] = 1.0
    name_cum = np.cumsum(s, axis=1)
    name_cum[:, -1] = 1.0
    return _World(name_probs=s, name_cum=name_cum, zip_given_race=g, zip_cum=np.ascontiguousarray(cum),
                  white_share=(white - mean) / sd, names=tables.surname.index.to_numpy(dtype=object),
                  places=tables.geo_given_race["zcta"].index.to_numpy(dtype=object))


@dataclass(frozen=True)
class Simulated:
    """One simulated data set: codes into the Census tables, true race, the outcome and BISG probabilities."""

    name: np.ndarray
    place: np.ndarray
    race: np.ndarray
    y: np.ndarray
    p: np.ndarray

    def sample_rates(self) -> np.ndarray:
        """The rates by true race in this data set."""
        n = np.bincount(self.race, minlength=len(RACES))
        k = np.bincount(self.race, weights=self.y, minlength=len(RACES))
        with np.errstate(divide="ignore", invalid="ignore"):
            return k / n


def _logit(x: np.ndarray) -> np.ndarray:
    return np.log(x / (1 - x))


def place_rates(rates: np.ndarray, place_effect: float) -> np.ndarray:
    """P(Y = 1 | race, place): the race's rate moved on the logit scale by place_effect per sd of White share."""
    w = world()
    z = _logit(rates)[None, :] + place_effect * w.white_share[:, None]
    return 1 / (1 + np.exp(-z))


def population_rates(rates: np.ndarray, place_effect: float) -> np.ndarray:
    """The true rate by race over the population: sum over places of P(place | race) P(Y | race, place)."""
    if place_effect == 0:
        return np.asarray(rates, float)
    w = world()
    return (w.zip_given_race * place_rates(rates, place_effect)).sum(axis=0)


def simulate(rows: int, rng: np.random.Generator, rates: np.ndarray = TRUE_RATES,
             place_effect: float = 0.0) -> Simulated:
    """``rows`` people (see the module docstring), with their BISG probabilities computed from the tables."""
    w = world()
    name = rng.integers(0, len(w.names), rows)
    race = (w.name_cum[name] < rng.random(rows)[:, None]).sum(axis=1)
    race = np.minimum(race, len(RACES) - 1)
    place = np.empty(rows, dtype=np.int64)
    for r in range(len(RACES)):
        where = np.flatnonzero(race == r)
        place[where] = np.minimum(np.searchsorted(w.zip_cum[r], rng.random(len(where)), side="right"),
                                  len(w.places) - 1)
    if place_effect:
        chance = place_rates(rates, place_effect)[place, race]
    else:
        chance = np.asarray(rates)[race]
    y = (rng.random(rows) < chance).astype(float)
    post = w.name_probs[name] * w.zip_given_race[place]
    post /= post.sum(axis=1, keepdims=True)
    return Simulated(name=name, place=place, race=race, y=y, p=post)


__all__ = ["TRUE_RATES", "Simulated", "place_rates", "population_rates", "simulate", "world"]
