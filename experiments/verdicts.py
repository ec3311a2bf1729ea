"""The verdict rule: what each verdict of ``docs/figures/verdicts.json`` must carry.

A verdict judges one claim of an experiment (``NAME.claims.json``) against the paper. The rule:

- a **paper verdict** (*holds*, *holds in direction*, *does not hold*) quotes the paper's own
  sentence: ``paper`` (000-004), ``section`` (where the sentence stands) and ``quote`` (the words as
  printed), and names the data it rests on: ``rows``, filters on the experiment's ``NAME.csv``
  (column -> value), each selecting at least one row;
- *holds* also says how close is close: ``tolerance`` (the paper's figure reproduced within what)
  and ``problem`` (the rows are the paper's own kind of problem);
- a claim **beyond the papers** (its text says "(beyond the paper...)", or its paper column says the
  text has no such statement) gets the verdict *beyond the papers*, never a paper verdict: a preset
  or a form the papers do not have does not colour their reproduction;
- every verdict has a ``reason``: the measured figure with its size, and the paper's beside it.

:func:`verdict_problems` lists what breaks the rule (the suite's test asserts the list is empty);
:func:`source_text` is the source as REPORT.md prints it under the verdict.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path

#: the verdicts that judge a claim against the paper's own sentence
PAPER_VERDICTS = ("holds", "holds in direction", "does not hold")
#: the papers a quotation can come from
PAPER_IDS = ("000", "001", "002", "003", "004")
#: words in a claim's text, or in its paper column, that put it beyond the papers
BEYOND_MARKS = ("(beyond the paper", "not in the text", "no figure in the papers")
#: a quotation is at least a clause
MIN_QUOTE = 20


def is_beyond(claim: dict) -> bool:
    """True for a claim the papers do not make (see :data:`BEYOND_MARKS`)."""
    text = f"{claim.get('text', '')} || {claim.get('paper', '')}".lower()
    return any(mark in text for mark in BEYOND_MARKS)


def _csv_rows(path: Path) -> list:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _row_problems(name: str, rows, figures: Path) -> list:
    path = figures / f"{name}.csv"
    if not rows:
        return ["no data rows ('rows')"]
    if not path.exists():
        return [f"no data file {path.name}"]
    table = _csv_rows(path)
    problems = []
    for where in rows:
        if not isinstance(where, dict) or not where:
            problems.append(f"a row filter is not a column -> value table: {where!r}")
            continue
        unknown = [k for k in where if table and k not in table[0]]
        if unknown:
            problems.append(f"{path.name} has no column {unknown}")
        elif not any(all(r.get(k) == str(v) for k, v in where.items()) for r in table):
            problems.append(f"no row of {path.name} has {where}")
    return problems


def verdict_problems(verdicts: dict, found: dict, figures: Path) -> list:
    """Every break of the rule, as ``(experiment, claim, what)``.

    ``verdicts`` is verdicts.json's content, ``found`` :func:`experiments.__main__.load_claims`'s
    (name -> {"gpu": claims, "llvmpipe": claims}), ``figures`` the folder of the CSV files.
    """
    judged = verdicts.get("claims", {})
    problems = []
    for name, runs in found.items():
        main = runs.get("gpu") or runs.get("llvmpipe")
        for claim in main["claims"]:
            v = judged.get(name, {}).get(claim["text"])
            say = lambda what: problems.append((name, claim["text"], what))  # noqa: E731
            if v is None:
                say("no verdict")
                continue
            verdict = v.get("verdict")
            if verdict not in PAPER_VERDICTS + ("beyond the papers",):
                say(f"verdict {verdict!r} is not one of {PAPER_VERDICTS + ('beyond the papers',)}")
            if not v.get("reason"):
                say("no reason")
            if is_beyond(claim) and verdict != "beyond the papers":
                say(f"a claim beyond the papers has the paper verdict {verdict!r}")
            if verdict not in PAPER_VERDICTS:
                continue
            if v.get("paper") not in PAPER_IDS:
                say(f"no paper ('paper' one of {PAPER_IDS}) for the quotation")
            if not v.get("section"):
                say("no section for the quotation")
            if len(v.get("quote", "").strip()) < MIN_QUOTE:
                say("no quotation of the paper's sentence ('quote')")
            problems += [(name, claim["text"], p) for p in _row_problems(name, v.get("rows"), figures)]
            if verdict == "holds" and not (v.get("tolerance") and v.get("problem")):
                say("'holds' without the tolerance ('tolerance') and the paper's kind of problem ('problem')")
    return problems


def source_text(v: dict) -> str:
    """'000, section 5.2 (Fig. 11): "..."' for a paper verdict; '' for the others."""
    if v.get("verdict") not in PAPER_VERDICTS or not v.get("quote"):
        return ""
    quote = re.sub(r"\s+", " ", v["quote"]).strip()
    return f"{v.get('paper', '?')}, {v.get('section', '?')}: “{quote}”"
