"""A small sparse MILP builder over HiGHS: add variables and rows, solve with a time limit, and
always get back the incumbent **and** the dual bound (a gap even when the solver stops early)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np

INF = highspy.kHighsInf


@dataclass
class Solution:
    values: np.ndarray | None  # the incumbent (None: no feasible point found)
    objective: float  # the incumbent's objective (inf without one)
    bound: float  # a proven lower bound on the optimum (minimisation)
    status: str  # "optimal" | "time limit" | "infeasible" | HiGHS's word for anything else
    seconds: float

    @property
    def gap(self) -> float:
        """(incumbent − bound) / |incumbent|: 0 when proven optimal."""
        if self.values is None:
            return float("inf")
        return max(0.0, self.objective - self.bound) / max(abs(self.objective), 1e-9)


class Milp:
    """Minimise c·x subject to lo ≤ A x ≤ hi and the variables' bounds and integrality."""

    def __init__(self):
        self.cost: list[float] = []
        self.lower: list[float] = []
        self.upper: list[float] = []
        self.integer: list[bool] = []
        self.rows_lo: list[float] = []
        self.rows_hi: list[float] = []
        self.starts: list[int] = [0]
        self.index: list[int] = []
        self.value: list[float] = []

    def add_vars(self, n: int, cost=0.0, lower=0.0, upper=INF, integer: bool = False) -> np.ndarray:
        """n new variables; their column indices."""
        first = len(self.cost)
        self.cost += list(np.broadcast_to(np.asarray(cost, float), (n,)))
        self.lower += [float(lower)] * n
        self.upper += [float(upper)] * n
        self.integer += [integer] * n
        return np.arange(first, first + n)

    def add_row(self, cols, coefs, lo: float = -INF, hi: float = INF) -> None:
        cols = np.asarray(cols, np.int64).ravel()
        coefs = np.broadcast_to(np.asarray(coefs, float), cols.shape).ravel()
        keep = coefs != 0
        self.index += cols[keep].tolist()
        self.value += coefs[keep].tolist()
        self.starts.append(len(self.index))
        self.rows_lo.append(lo)
        self.rows_hi.append(hi)

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows_lo), len(self.cost)

    def solve(self, time_limit: float = 60.0, start: np.ndarray | None = None, threads: int = 1,
              rel_gap: float = 1e-6) -> Solution:
        """``start``: a feasible point to begin from (its objective is then an upper bound)."""
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = len(self.cost), len(self.rows_lo)
        lp.col_cost_ = np.asarray(self.cost)
        lp.col_lower_ = np.asarray(self.lower)
        lp.col_upper_ = np.asarray(self.upper)
        lp.row_lower_ = np.asarray(self.rows_lo, float)
        lp.row_upper_ = np.asarray(self.rows_hi, float)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = np.asarray(self.starts, np.int32)
        lp.a_matrix_.index_ = np.asarray(self.index, np.int32)
        lp.a_matrix_.value_ = np.asarray(self.value, float)
        lp.integrality_ = [highspy.HighsVarType.kInteger if i else highspy.HighsVarType.kContinuous
                           for i in self.integer]
        h = highspy.Highs()
        h.silent()
        h.passModel(lp)
        h.setOptionValue("time_limit", float(time_limit))
        h.setOptionValue("threads", int(threads))
        h.setOptionValue("mip_rel_gap", float(rel_gap))
        h.setOptionValue("random_seed", 0)  # the same instance gives the same answer
        if start is not None:
            sol = highspy.HighsSolution()
            sol.col_value = list(np.asarray(start, float))
            sol.value_valid = True
            h.setSolution(sol)
        t0 = time.monotonic()
        h.run()
        seconds = time.monotonic() - t0
        status = h.getModelStatus()
        info = h.getInfo()
        has = info.primal_solution_status == 2  # kSolutionStatusFeasible
        values = np.asarray(h.getSolution().col_value) if has else None
        word = {highspy.HighsModelStatus.kOptimal: "optimal", highspy.HighsModelStatus.kTimeLimit: "time limit",
                highspy.HighsModelStatus.kInfeasible: "infeasible"}.get(status, h.modelStatusToString(status))
        objective = float(info.objective_function_value) if has else float("inf")
        bound = float(info.mip_dual_bound)
        if status == highspy.HighsModelStatus.kOptimal:
            bound = min(bound, objective) if has else bound
        return Solution(values, objective, bound, word, seconds)
