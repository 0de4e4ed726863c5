"""scipy.special functions that tapegrad offers under the same names and signatures.

scipy's `logsumexp`, `softmax`, `log_softmax` and `polygamma` convert their inputs with
``np.asarray`` before numpy can hand a traced value to tapegrad; these versions behave
exactly like scipy's on plain values and record one op on traced or dual ones. The other
scipy.special functions are ufuncs and work on traced values as they are.
"""
from ..rules.logsumexp import log_softmax, logsumexp, softmax
from ..rules.special import polygamma

__all__ = ["logsumexp", "softmax", "log_softmax", "polygamma"]
