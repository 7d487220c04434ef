#!/usr/bin/env python3
"""Validate the second blind holdout set under testdata/eval-fresh2 and print its counts.

Usage: python3 testdata/eval-fresh2/check.py   (from anywhere)

The checks are testdata/eval-fresh/check.py's, run on this directory with this set's minimums
(issue 18, second holdout set): at least 70 lessons with at least 40 % Chinese, at least 90
queries with at least 20 no_answer, at least 90 pairs with at least 20 cross-language, at least
30 same-domain hard negatives among the unrelated ones and at least 6 of them contradictions.
Exit status 0 when every file is valid, 1 otherwise.
"""

import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.argv = [sys.argv[0], "--dir", HERE, "--min-lessons", "70", "--min-queries", "90",
            "--min-pairs", "90", "--min-contradictions", "6"]
runpy.run_path(os.path.join(HERE, "..", "eval-fresh", "check.py"), run_name="__main__")
