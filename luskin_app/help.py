"""Help texts for jargon, shared by every page so that the words mean the same everywhere."""

from __future__ import annotations

from luskin_core.spec.options import SEED_OPTION

HELP = {
    "tolerance": ("How large a gap between the two groups' shares you accept as fair, in percentage "
                  "points. The paper's '≈'. 5 points is a common choice."),
    "p_value": ("The chance of seeing a gap at least this large if the two groups were in fact treated "
                "alike. Below 0.05 the gap is called 'not due to chance'."),
    "ci": "95% confidence interval: the range that contains the true share with 95% confidence.",
    "auc": ("AUC (area under the ROC curve): how well the model ranks positive above negative cases; "
            "1 is perfect, 0.5 is a coin toss. Measured against the original labels."),
    "tpr": "TPR (true positive rate): of the people whose outcome is positive, the share the model flags.",
    "fpr": "FPR (false positive rate): of the people whose outcome is negative, the share the model flags anyway.",
    "lambda": ("lambda: how much fairness weighs against accuracy. 0 = accuracy only; larger values push "
               "the groups' TPR and FPR together at some cost in accuracy."),
    "alpha": ("alpha: the weight on accuracy in the training objective (1 = accuracy only). Smaller "
              "alpha puts more weight on making the groups' score distributions alike."),
    "seed": SEED_OPTION.help,  # declared with the option (luskin_core/spec/options.py)
    "guesses": ("For a file Luskin has not seen before, the outcome, its 'yes' value and the protected group "
                "are guessed from the column names and values. Check them: a wrong outcome or group gives a "
                "confident but wrong verdict."),
}
